// SPDX-License-Identifier: GPL-2.0
/*
 * pr_raw: `ptreplay raw`, a ptxed-compatible decode session.
 *
 * The decode loops follow the observable behaviour of libipt's ptxed (as of
 * libipt 2.3): events are drained before each instruction or block, errors
 * are reported as [offset, ip: kind: message] at the IP following the last
 * decoded instruction, and decoding resumes at the next PSB.
 */
#include "pr_raw.h"
#include "pr_insn.h"
#include "pr_print.h"

#include <intel-pt.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Print a note that an option has no effect on this libipt version. */
static void pr_raw_note(const struct pr_raw *raw, const char *what)
{
	fprintf(raw->err, "ptreplay raw: note: %s is not supported by libipt "
		"%d.%d; ignored.\n", what, LIBIPT_VERSION_MAJOR,
		LIBIPT_VERSION_MINOR);
}

/* Map all --raw images.
 *
 * Returns zero on success, a negative error code otherwise.
 */
static int pr_raw_map(struct pr_raw *raw)
{
	const struct pr_opts *opts;
	size_t idx;
	int errcode;

	opts = raw->opts;
	if (opts->have_iscache_limit) {
		errcode = pr_image_set_cache_limit(&raw->image,
						   opts->iscache_limit);
		if (errcode < 0)
			return errcode;
	}

	for (idx = 0; idx < opts->nraw; ++idx) {
		const struct pr_file_spec *spec;
		int isid;

		spec = &opts->raw[idx];
		isid = pr_image_add_file(&raw->image, spec->path, spec->offset,
					 spec->size, NULL, spec->base);
		if (isid < 0) {
			fprintf(raw->err, "ptreplay raw: --raw: failed to map "
				"%s at 0x%" PRIx64 ": %s.\n", spec->path,
				spec->base, pt_errstr(pt_errcode(isid)));
			return isid;
		}

		if (opts->verbose)
			fprintf(raw->err, "ptreplay raw: mapped %s (offset "
				"0x%" PRIx64 ") at 0x%" PRIx64 ", isid %d.\n",
				spec->path, spec->offset, spec->base, isid);
	}

	return 0;
}

/* Allocate the decoder selected in @raw->opts for @config.
 *
 * Returns zero on success, a negative error code otherwise.
 */
static int pr_raw_alloc_decoder(struct pr_raw *raw, struct pt_config *config)
{
	const struct pr_opts *opts;

	opts = raw->opts;
	memset(&config->flags, 0, sizeof(config->flags));

	switch (opts->type) {
	case pr_insn_decoder:
		config->flags.variant.insn.enable_tick_events =
			opts->event_tick;

		raw->insn = pt_insn_alloc_decoder(config);
		if (!raw->insn)
			return -pte_nomem;

		return pt_insn_set_image(raw->insn, pr_image_pt(&raw->image));

	case pr_block_decoder:
		config->flags.variant.block.enable_tick_events =
			opts->event_tick;
		config->flags.variant.block.end_on_call = opts->end_on_call;
		config->flags.variant.block.end_on_jump = opts->end_on_jump;

		raw->block = pt_blk_alloc_decoder(config);
		if (!raw->block)
			return -pte_nomem;

		return pt_blk_set_image(raw->block, pr_image_pt(&raw->image));
	}

	return -pte_internal;
}

int pr_raw_init(struct pr_raw *raw, const struct pr_opts *opts, FILE *out,
		FILE *err)
{
	struct pt_config config;
	int errcode;

	if (!raw || !opts || !out || !err)
		return -pte_invalid;

	memset(raw, 0, sizeof(*raw));
	raw->opts = opts;
	raw->out = out;
	raw->err = err;

	if (opts->event_ip)
		raw->pflags |= pr_print_event_ip;
	if (opts->event_time)
		raw->pflags |= pr_print_event_time;
	if (opts->print_offset)
		raw->pflags |= pr_print_offset;
	if (opts->print_time)
		raw->pflags |= pr_print_time;

	errcode = pr_dis_init(&raw->dis);
	if (errcode < 0)
		return errcode;

	errcode = pr_image_init(&raw->image, NULL);
	if (errcode < 0)
		return errcode;

	errcode = pr_raw_map(raw);
	if (errcode < 0)
		goto err;

	config = opts->config;
	if (config.cpu.vendor) {
		errcode = pt_cpu_errata(&config.errata, &config.cpu);
		if (errcode < 0)
			fprintf(out, "[0, 0: config error: %s]\n",
				pt_errstr(pt_errcode(errcode)));
	}

	errcode = pr_file_load(&raw->trace, &raw->trace_size, &opts->pt);
	if (errcode < 0) {
		fprintf(err, "ptreplay raw: --pt: failed to load %s: %s.\n",
			opts->pt.path, errcode == -pte_nomem ? "out of memory" :
			"cannot read it, or the offset or range is outside "
			"of it");
		goto err;
	}

	config.begin = raw->trace;
	config.end = raw->trace + raw->trace_size;

	errcode = pr_raw_alloc_decoder(raw, &config);
	if (errcode < 0) {
		fprintf(err, "ptreplay raw: failed to set up the decoder: "
			"%s.\n", pt_errstr(pt_errcode(errcode)));
		goto err;
	}

	if (opts->event_iflags)
		pr_raw_note(raw, "--event:iflags");
	if (opts->keep_tcal_on_ovf)
		pr_raw_note(raw, "keep-tcal-on-ovf");
	if (opts->resync_on_error)
		pr_raw_note(raw, "--resync-on-error (resync at next PSB)");

	return 0;

err:
	pr_raw_fini(raw);
	return errcode;
}

void pr_raw_fini(struct pr_raw *raw)
{
	if (!raw)
		return;

	pt_insn_free_decoder(raw->insn);
	raw->insn = NULL;
	pt_blk_free_decoder(raw->block);
	raw->block = NULL;

	free(raw->trace);
	raw->trace = NULL;
	raw->trace_size = 0;

	pr_image_fini(&raw->image);
	pr_dis_fini(&raw->dis);
}

/* The current trace offset of @raw's decoder in *@offset.
 *
 * Returns zero on success, a negative error code otherwise.
 */
static int pr_raw_offset(const struct pr_raw *raw, uint64_t *offset)
{
	*offset = 0ull;

	if (raw->insn)
		return pt_insn_get_offset(raw->insn, offset);

	return pt_blk_get_offset(raw->block, offset);
}

/* Report error @errcode of @kind at @ip and the current trace offset. */
static void pr_raw_diag(struct pr_raw *raw, uint64_t ip, const char *kind,
			int errcode)
{
	uint64_t offset;
	int status;

	status = pr_raw_offset(raw, &offset);
	pr_print_diag(raw->out, status, offset, ip, kind, errcode);
	raw->nerrors += 1;
}

/* The IP to report an error at after the instruction @raw_insn (@size
 * bytes) at @ip: the next IP if the instruction can be decoded, else @ip.
 */
static uint64_t pr_raw_error_ip(enum pt_exec_mode mode,
				const uint8_t *raw_insn, uint8_t size,
				uint64_t ip)
{
	struct pr_insn_info info;
	uint64_t next;

	if (pr_insn_decode(&info, mode, raw_insn, size) < 0)
		return ip;

	if (pr_insn_next_ip(&next, &info, ip) < 0)
		return ip;

	return next;
}

/* Format the instruction @raw_insn (@size bytes) for printing into @buf.
 *
 * Returns @buf, or NULL with --no-inst.
 */
static const char *pr_raw_text(struct pr_raw *raw, enum pt_exec_mode mode,
			       const uint8_t *raw_insn, uint8_t size,
			       uint64_t ip, char *buf, size_t len)
{
	size_t pos;
	int idx;

	if (raw->opts->no_inst)
		return NULL;

	if (pr_dis_format(&raw->dis, mode, raw_insn, size, ip, buf, len) > 0)
		return buf;

	pos = (size_t) snprintf(buf, len, "(bad)");
	for (idx = 0; idx < size && pos + 4 < len; ++idx)
		pos += (size_t) snprintf(&buf[pos], len - pos, " %02x",
					 raw_insn[idx]);

	return buf;
}

/* Check @insn for --check: a known section and a length that pr_insn
 * agrees with.
 */
static void pr_raw_check_insn(struct pr_raw *raw, const struct pt_insn *insn,
			      uint64_t offset)
{
	struct pr_insn_info info;
	int size;

	if (insn->isid <= 0)
		fprintf(raw->out, "[%" PRIx64 ", %" PRIx64 ": check error: "
			"bad isid]\n", offset, insn->ip);

	size = pr_insn_decode(&info, insn->mode, insn->raw, insn->size);
	if (size != insn->size)
		fprintf(raw->out, "[%" PRIx64 ", %" PRIx64 ": check error: "
			"length %d, libipt says %u]\n", offset, insn->ip,
			size, insn->size);
}

/* Fetch the instruction at @ip in @block into @buf.
 *
 * Returns the number of bytes fetched, a negative error code otherwise.
 */
static int pr_raw_fetch(struct pr_raw *raw, const struct pt_block *block,
			uint64_t ip, uint8_t *buf, uint8_t len)
{
	if (!block->ninsn)
		return -pte_invalid;

	/* The last instruction may continue in another section. */
	if (ip == block->end_ip && block->truncated) {
		if (!block->size || len < block->size)
			return -pte_bad_insn;

		memcpy(buf, block->raw, block->size);
		return block->size;
	}

	return pr_image_read(&raw->image, buf, len, block->isid, ip);
}

/* Print @block's instructions (and [block] with --block:show-blocks). */
static void pr_raw_print_block(struct pr_raw *raw,
			       const struct pt_block *block, uint64_t offset)
{
	const struct pr_opts *opts;
	uint64_t ip;
	uint16_t ninsn;

	opts = raw->opts;
	if (opts->show_blocks) {
		if (opts->print_stats)
			fprintf(raw->out, "[block %" PRIx64 "]\n",
				raw->nblocks);
		else
			fputs("[block]\n", raw->out);
	}

	ninsn = block->ninsn;
	if (!ninsn)
		return;

	ip = block->ip;
	for (;;) {
		uint8_t buf[pt_max_insn_size];
		struct pr_insn_info info;
		char text[128];
		int size;

		size = pr_raw_fetch(raw, block, ip, buf, sizeof(buf));
		if (size < 0) {
			fprintf(raw->out, "%s%016" PRIx64 " [fetch error: %s]\n",
				block->speculative ? "? " : "", ip,
				pt_errstr(pt_errcode(size)));
			break;
		}

		size = pr_insn_decode(&info, block->mode, buf, (size_t) size);
		if (size < 0) {
			fprintf(raw->out, "%s%016" PRIx64 " [decode error: %s]\n",
				block->speculative ? "? " : "", ip,
				pt_errstr(pt_errcode(size)));
			break;
		}

		pr_print_insn(raw->out, ip, block->speculative,
			      pr_raw_text(raw, block->mode, buf, info.size, ip,
					  text, sizeof(text)),
			      raw->pflags, offset, raw->time);

		ninsn -= 1;
		if (!ninsn)
			break;

		(void) pr_insn_next_ip(&ip, &info, ip);
	}

	/* Walking the block must bring us to its last instruction. */
	if (ip != block->end_ip)
		pr_raw_diag(raw, ip, "reconstruct error", -pte_nosync);
}

/* Check @block for --check: a known section, decodable instructions and
 * a walk that ends at the block's last instruction.
 */
static void pr_raw_check_block(struct pr_raw *raw,
			       const struct pt_block *block, uint64_t offset)
{
	uint16_t ninsn;
	uint64_t ip;

	ninsn = block->ninsn;
	if (!ninsn)
		return;

	if (block->isid <= 0)
		fprintf(raw->out, "[%" PRIx64 ", %" PRIx64 ": check error: "
			"bad isid]\n", offset, block->ip);

	ip = block->ip;
	for (;;) {
		uint8_t buf[pt_max_insn_size];
		struct pr_insn_info info;
		int size;

		size = pr_raw_fetch(raw, block, ip, buf, sizeof(buf));
		if (size < 0) {
			fprintf(raw->out, "[%" PRIx64 ", %" PRIx64 ": fetch "
				"error: %s]\n", offset, ip,
				pt_errstr(pt_errcode(size)));
			return;
		}

		size = pr_insn_decode(&info, block->mode, buf, (size_t) size);
		if (size < 0) {
			fprintf(raw->out, "[%" PRIx64 ", %" PRIx64 ": decode "
				"error: %s]\n", offset, ip,
				pt_errstr(pt_errcode(size)));
			return;
		}

		if (!--ninsn)
			break;

		(void) pr_insn_next_ip(&ip, &info, ip);
	}

	if (ip != block->end_ip)
		fprintf(raw->out, "[%" PRIx64 ", %" PRIx64 ": error: did not "
			"reach end: %" PRIx64 "]\n", offset, ip,
			block->end_ip);
}

/* Synchronize @raw's decoder onto the next PSB.
 *
 * Returns the sync status on success, a negative error code otherwise.
 */
static int pr_raw_sync_forward(struct pr_raw *raw)
{
	if (raw->insn)
		return pt_insn_sync_forward(raw->insn);

	return pt_blk_sync_forward(raw->block);
}

/* Fetch the next event of @raw's decoder into @event.
 *
 * Returns the status on success, a negative error code otherwise.
 */
static int pr_raw_event(struct pr_raw *raw, struct pt_event *event)
{
	if (raw->insn)
		return pt_insn_event(raw->insn, event, sizeof(*event));

	return pt_blk_event(raw->block, event, sizeof(*event));
}

/* Drain pending events of @raw's decoder.
 *
 * Returns the last status on success, a negative error code otherwise.
 */
static int pr_raw_events(struct pr_raw *raw, int status)
{
	while (status & pts_event_pending) {
		struct pt_event event;
		uint64_t offset;

		offset = 0ull;
		if (raw->opts->print_offset)
			(void) pr_raw_offset(raw, &offset);

		status = pr_raw_event(raw, &event);
		if (status < 0)
			return status;

		raw->time = event.tsc;
		if (!raw->opts->quiet && !event.status_update)
			pr_print_event(raw->out, &event, raw->pflags, offset);
	}

	return status;
}

/* What one step of either decoder yields. */
union pr_raw_unit {
	struct pt_insn insn;
	struct pt_block block;
};

/* The decoder-specific part of a decode session. */
struct pr_raw_ops {
	/* Decode, print and check the next @unit, found at trace @offset.
	 *
	 * Returns the decoder status, a negative error code on errors.
	 */
	int (*next)(struct pr_raw *raw, union pr_raw_unit *unit,
		    uint64_t offset);

	/* The IP to report error @errcode at after the last @unit. */
	uint64_t (*error_ip)(struct pr_raw *raw,
			     const union pr_raw_unit *unit, int errcode);
};

/* Report the error at the next IP unless it is about the instruction
 * itself.
 */
static uint64_t pr_raw_error_ip_insn(struct pr_raw *raw,
				     const union pr_raw_unit *unit,
				     int errcode)
{
	const struct pt_insn *insn;

	(void) raw;

	insn = &unit->insn;
	if (errcode == -pte_bad_query || insn->iclass == ptic_error)
		return insn->ip;

	return pr_raw_error_ip(insn->mode, insn->raw, insn->size, insn->ip);
}

static int pr_raw_next_insn(struct pr_raw *raw, union pr_raw_unit *unit,
			    uint64_t offset)
{
	struct pt_insn *insn;
	char text[128];
	int status;

	insn = &unit->insn;
	status = pt_insn_next(raw->insn, insn, sizeof(*insn));

	/* Even on errors, the instruction may have been decoded. */
	if (status < 0 && insn->iclass == ptic_error)
		return status;

	if (!raw->opts->quiet)
		pr_print_insn(raw->out, insn->ip, insn->speculative,
			      pr_raw_text(raw, insn->mode, insn->raw,
					  insn->size, insn->ip, text,
					  sizeof(text)),
			      raw->pflags, offset, raw->time);

	raw->ninsn += 1;

	if (raw->opts->check)
		pr_raw_check_insn(raw, insn, offset);

	return status;
}

/* Report the error after the block's last instruction unless it is about
 * that instruction.
 */
static uint64_t pr_raw_error_ip_block(struct pr_raw *raw,
				      const union pr_raw_unit *unit,
				      int errcode)
{
	const struct pt_block *block;
	uint8_t buf[pt_max_insn_size];
	uint64_t ip;
	int size;

	block = &unit->block;
	if (!block->ninsn)
		return block->ip;

	ip = block->end_ip;
	size = pr_raw_fetch(raw, block, ip, buf, sizeof(buf));
	if (errcode == -pte_bad_query || size <= 0)
		return ip;

	return pr_raw_error_ip(block->mode, buf, (uint8_t) size, ip);
}

static int pr_raw_next_block(struct pr_raw *raw, union pr_raw_unit *unit,
			     uint64_t offset)
{
	struct pt_block *block;
	int status;

	block = &unit->block;
	status = pt_blk_next(raw->block, block, sizeof(*block));

	/* Even on errors, some instructions may have been decoded. */
	raw->ninsn += block->ninsn;
	raw->nblocks += 1;

	if (!raw->opts->quiet)
		pr_raw_print_block(raw, block, offset);

	if (raw->opts->check)
		pr_raw_check_block(raw, block, offset);

	return status;
}

static const struct pr_raw_ops pr_raw_insn_ops = {
	.next = pr_raw_next_insn,
	.error_ip = pr_raw_error_ip_insn,
};

static const struct pr_raw_ops pr_raw_block_ops = {
	.next = pr_raw_next_block,
	.error_ip = pr_raw_error_ip_block,
};

/* Decode from a synchronization point until an error or the end of the
 * trace, with the sync status @status.
 *
 * Returns -pte_eos at the end of the trace, a negative error code (to be
 * diagnosed with the last @unit) otherwise.
 */
static int pr_raw_run(struct pr_raw *raw, const struct pr_raw_ops *ops,
		      int status, union pr_raw_unit *unit)
{
	const struct pr_opts *opts;

	opts = raw->opts;
	for (;;) {
		uint64_t offset;

		status = pr_raw_events(raw, status);
		if (status < 0)
			return status;

		if (status & pts_eos) {
			if (!(status & pts_ip_suppressed) && !opts->quiet)
				fputs("[end of trace]\n", raw->out);
			return -pte_eos;
		}

		offset = 0ull;
		if (opts->print_offset || opts->check)
			(void) pr_raw_offset(raw, &offset);

		status = ops->next(raw, unit, offset);
		if (status < 0)
			return status;
	}
}

/* Decode the trace with @raw's decoder, resynchronizing after errors.
 *
 * Returns zero when done.
 */
static int pr_raw_decode_all(struct pr_raw *raw, const struct pr_raw_ops *ops)
{
	uint64_t sync;

	sync = 0ull;
	for (;;) {
		union pr_raw_unit unit;
		int status;

		memset(&unit, 0, sizeof(unit));

		status = pr_raw_sync_forward(raw);
		if (status < 0) {
			uint64_t new_sync;

			if (status == -pte_eos)
				return 0;

			pr_raw_diag(raw, 0ull, "sync error", status);

			/* Stop if we made no progress. */
			if (pr_raw_offset(raw, &new_sync) < 0 ||
			    new_sync <= sync)
				return 0;

			sync = new_sync;
			continue;
		}

		raw->nsync += 1;

		status = pr_raw_run(raw, ops, status, &unit);
		if (status == -pte_eos)
			return 0;

		pr_raw_diag(raw, ops->error_ip(raw, &unit, status), "error",
			    status);
	}
}

int pr_raw_decode(struct pr_raw *raw)
{
	const struct pr_opts *opts;
	int errcode;

	if (!raw || (!raw->insn && !raw->block))
		return -pte_invalid;

	opts = raw->opts;
	if (raw->insn)
		errcode = pr_raw_decode_all(raw, &pr_raw_insn_ops);
	else
		errcode = pr_raw_decode_all(raw, &pr_raw_block_ops);

	if (opts->print_stats) {
		if (opts->stat_flags & pr_stat_insn)
			fprintf(raw->out, "insn: %" PRIu64 ".\n", raw->ninsn);
		if (opts->stat_flags & pr_stat_blocks)
			fprintf(raw->out, "blocks:\t%" PRIu64 ".\n",
				raw->nblocks);
	}

	return errcode;
}

int pr_raw_main(int argc, char *const *argv, const char *prog)
{
	struct pr_opts opts;
	struct pr_raw raw;
	int status;

	if (!prog)
		prog = "ptreplay raw";

	pr_opts_init(&opts);

	status = pr_opts_parse(&opts, argc, argv, prog, stdout, stderr);
	if (status != pr_opts_decode) {
		pr_opts_fini(&opts);
		return status == pr_opts_done ? 0 : 1;
	}

	status = pr_raw_init(&raw, &opts, stdout, stderr);
	if (status < 0) {
		pr_opts_fini(&opts);
		return 1;
	}

	status = pr_raw_decode(&raw);
	fflush(stdout);

	if (status < 0) {
		fprintf(stderr, "%s: decode failed: %s.\n", prog,
			pt_errstr(pt_errcode(status)));
		status = 2;
	} else if (!raw.nsync) {
		fprintf(stderr, "%s: %s: no synchronization point (PSB) "
			"found; is this Intel PT data?\n", prog,
			opts.pt.path);
		status = 2;
	} else if (raw.nerrors) {
		fprintf(stderr, "%s: %" PRIu64 " decode error(s).\n", prog,
			raw.nerrors);
		status = 2;
	} else
		status = 0;

	pr_raw_fini(&raw);
	pr_opts_fini(&opts);

	return status;
}
