// SPDX-License-Identifier: GPL-2.0
/*
 * pr_perf: a strict, bounds-checked perf.data reader.
 *
 * Layout (tools/perf/Documentation/perf.data-file-format.txt): a 104-byte
 * header with the attrs and data sections, attrs of attr_size bytes each
 * (the perf_event_attr followed by the file section of its ids), and the
 * data section: records of struct perf_event_header { u32 type; u16 misc;
 * u16 size; }, an AUXTRACE record being followed by its trace bytes.
 */
#include "pr_perf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERF_MAGIC2	0x32454c4946524550ULL	/* "PERFILE2" */
#define HEADER_SIZE	104

/* sample_type bits that make up the sample_id trailer */
#define ST_TID		(1ULL << 1)
#define ST_TIME		(1ULL << 2)
#define ST_ID		(1ULL << 6)
#define ST_CPU		(1ULL << 7)
#define ST_STREAM_ID	(1ULL << 9)
#define ST_IDENTIFIER	(1ULL << 16)

static int pr_perf_fail(struct pr_perf *perf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(perf->error, sizeof(perf->error), fmt, ap);
	va_end(ap);
	return -1;
}

/* The size of the sample_id trailer of @attr (zero if none). */
static size_t pr_trailer_size(const struct pr_perf_attr *attr)
{
	uint64_t st = attr->sample_type;
	size_t size = 0;

	if (!(attr->flags & PR_ATTR_SAMPLE_ID_ALL))
		return 0;
	if (st & ST_TID)
		size += 8;
	if (st & ST_TIME)
		size += 8;
	if (st & ST_ID)
		size += 8;
	if (st & ST_STREAM_ID)
		size += 8;
	if (st & ST_CPU)
		size += 8;
	if (st & ST_IDENTIFIER)
		size += 8;
	return size;
}

static int pr_perf_read_attrs(struct pr_perf *perf, uint64_t off,
			      uint64_t size, uint64_t attr_size)
{
	uint64_t n, i;

	if (attr_size < 64 + 16 || attr_size > 4096)
		return pr_perf_fail(perf, "bad attr size %llu",
				    (unsigned long long)attr_size);
	if (!size || size % attr_size)
		return pr_perf_fail(perf, "attrs section is not a multiple of "
				    "the attr size");
	if (off > perf->size || size > perf->size - off)
		return pr_perf_fail(perf, "attrs section beyond end of file");
	n = size / attr_size;
	if (n > PR_PERF_MAX_ATTRS)
		return pr_perf_fail(perf, "too many attrs (%llu)",
				    (unsigned long long)n);

	for (i = 0; i < n; ++i) {
		const uint8_t *a = perf->buf + off + i * attr_size;
		const uint8_t *ids = a + attr_size - 16;
		uint64_t ioff = pr_get64(ids), isize = pr_get64(ids + 8), k;
		struct pr_perf_attr *attr = &perf->attr[i];

		attr->type = pr_get32(a);
		attr->config = pr_get64(a + 8);
		attr->sample_type = pr_get64(a + 24);
		attr->flags = pr_get64(a + 40);
		if (attr->flags & PR_ATTR_FLOWJIT)
			perf->flowjit = 1;

		if (isize % 8 || ioff > perf->size || isize > perf->size - ioff)
			return pr_perf_fail(perf, "attr %llu: bad ids section",
					    (unsigned long long)i);
		for (k = 0; k < isize / 8; ++k) {
			if (perf->nids >= PR_PERF_MAX_IDS)
				return pr_perf_fail(perf, "too many ids");
			perf->ids[perf->nids] = pr_get64(perf->buf + ioff + k * 8);
			perf->id_attr[perf->nids] = (uint32_t)i;
			perf->nids += 1;
		}
	}
	perf->nattr = (uint32_t)n;
	return 0;
}

int pr_perf_init_mem(struct pr_perf *perf, const uint8_t *buf, size_t size)
{
	uint64_t attr_size, aoff, asize, doff, dsize;

	if (!perf)
		return -1;
	memset(perf, 0, sizeof(*perf));
	if (!buf)
		return pr_perf_fail(perf, "no data");
	perf->buf = buf;
	perf->size = size;

	if (size < 16 || pr_get64(buf) != PERF_MAGIC2)
		return pr_perf_fail(perf, "not a perf.data file (bad magic)");
	if (pr_get64(buf + 8) == 16)
		return pr_perf_fail(perf, "pipe-mode perf.data is not "
				    "supported; record to a file");
	if (size < HEADER_SIZE || pr_get64(buf + 8) != HEADER_SIZE)
		return pr_perf_fail(perf, "truncated or unknown perf.data "
				    "header");

	attr_size = pr_get64(buf + 16);
	aoff = pr_get64(buf + 24);
	asize = pr_get64(buf + 32);
	doff = pr_get64(buf + 40);
	dsize = pr_get64(buf + 48);

	if (pr_perf_read_attrs(perf, aoff, asize, attr_size) < 0)
		return -1;
	if (doff > size || dsize > size - doff)
		return pr_perf_fail(perf, "data section (%llu bytes at %llu) "
				    "beyond end of file (%zu bytes): "
				    "truncated file?",
				    (unsigned long long)dsize,
				    (unsigned long long)doff, size);
	if (!dsize && size > doff)
		return pr_perf_fail(perf, "the data section is empty but the "
				    "file is not: perf record did not finish "
				    "writing the header?");
	perf->data_off = doff;
	perf->data_size = dsize;
	perf->pos = 0;
	return 0;
}

int pr_perf_open(struct pr_perf *perf, const char *path)
{
	struct stat st;
	void *map;
	int fd, errcode;

	if (!perf || !path)
		return -1;
	memset(perf, 0, sizeof(*perf));

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return pr_perf_fail(perf, "cannot open %s: %s", path,
				    strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pr_perf_fail(perf, "%s is not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return pr_perf_fail(perf, "%s is empty", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return pr_perf_fail(perf, "cannot map %s: %s", path,
				    strerror(errno));

	errcode = pr_perf_init_mem(perf, map, (size_t)st.st_size);
	perf->mapped = 1;
	if (errcode < 0) {
		char error[sizeof(perf->error)];

		memcpy(error, perf->error, sizeof(error));
		pr_perf_fini(perf);
		memcpy(perf->error, error, sizeof(error));
		return -1;
	}
	return 0;
}

void pr_perf_fini(struct pr_perf *perf)
{
	if (!perf)
		return;
	if (perf->mapped && perf->buf)
		munmap((void *)perf->buf, perf->size);
	perf->buf = NULL;
	perf->mapped = 0;
}

/* The attr of a record whose trailer ends at @end (exclusive). */
static const struct pr_perf_attr *pr_perf_rec_attr(const struct pr_perf *perf,
						   const uint8_t *end,
						   size_t avail)
{
	const struct pr_perf_attr *first = &perf->attr[0];
	uint64_t id;
	uint32_t i;

	for (i = 1; i < perf->nattr; ++i)
		if (perf->attr[i].sample_type != first->sample_type ||
		    (perf->attr[i].flags & PR_ATTR_SAMPLE_ID_ALL) !=
		    (first->flags & PR_ATTR_SAMPLE_ID_ALL))
			break;
	if (i == perf->nattr)
		return first;

	/* Different layouts: PERF_SAMPLE_IDENTIFIER tells, as for perf. */
	if (avail < 8)
		return NULL;
	id = pr_get64(end - 8);
	for (i = 0; i < perf->nids; ++i)
		if (perf->ids[i] == id)
			return &perf->attr[perf->id_attr[i]];
	return NULL;
}

static void pr_perf_parse_trailer(struct pr_sample_id *sid,
				  const struct pr_perf_attr *attr,
				  const uint8_t *p)
{
	uint64_t st = attr->sample_type;

	if (st & ST_TID) {
		sid->pid = pr_get32(p);
		sid->tid = pr_get32(p + 4);
		p += 8;
	}
	if (st & ST_TIME) {
		sid->time = pr_get64(p);
		sid->has_time = 1;
		p += 8;
	}
	if (st & ST_ID) {
		sid->id = pr_get64(p);
		p += 8;
	}
	if (st & ST_STREAM_ID)
		p += 8;
	if (st & ST_CPU) {
		sid->cpu = pr_get32(p);
		p += 8;
	}
	if (st & ST_IDENTIFIER)
		sid->id = pr_get64(p);
}

int pr_perf_next(struct pr_perf *perf, struct pr_perf_rec *rec)
{
	const uint8_t *p;
	uint64_t left, size;

	if (!perf || !rec || !perf->buf)
		return -1;
	memset(rec, 0, sizeof(*rec));

	left = perf->data_size - perf->pos;
	if (!left)
		return 0;
	if (left < 8)
		return pr_perf_fail(perf, "truncated record header at offset "
				    "%llu", (unsigned long long)
				    (perf->data_off + perf->pos));

	p = perf->buf + perf->data_off + perf->pos;
	rec->offset = perf->data_off + perf->pos;
	rec->type = pr_get32(p);
	rec->misc = pr_get16(p + 4);
	size = pr_get16(p + 6);
	if (size < 8 || size > left)
		return pr_perf_fail(perf, "record of type %u at offset %llu "
				    "has bad size %llu", rec->type,
				    (unsigned long long)rec->offset,
				    (unsigned long long)size);
	rec->body = p + 8;
	rec->body_size = size - 8;
	perf->pos += size;

	if (rec->type == PR_REC_AUXTRACE) {
		uint64_t aux;

		if (rec->body_size < 32)
			return pr_perf_fail(perf, "AUXTRACE record at offset "
					    "%llu is too small",
					    (unsigned long long)rec->offset);
		aux = pr_get64(rec->body);
		if (aux > perf->data_size - perf->pos)
			return pr_perf_fail(perf, "AUXTRACE data at offset %llu "
					    "(%llu bytes) beyond end of data: "
					    "truncated file?",
					    (unsigned long long)rec->offset,
					    (unsigned long long)aux);
		rec->aux = perf->buf + perf->data_off + perf->pos;
		rec->aux_size = aux;
		perf->pos += aux;
		return 1;
	}

	/* Records of the kernel (below 64) and flowjit's carry a trailer. */
	if (rec->type < 64 && rec->type != 9 /* SAMPLE */ && perf->nattr) {
		const struct pr_perf_attr *attr;
		size_t tsize;

		attr = pr_perf_rec_attr(perf, p + size, rec->body_size);
		if (!attr)
			return 1;
		tsize = pr_trailer_size(attr);
		if (tsize > rec->body_size)
			return pr_perf_fail(perf, "record of type %u at offset "
					    "%llu is too small for its "
					    "sample_id", rec->type,
					    (unsigned long long)rec->offset);
		rec->body_size -= tsize;
		if (tsize)
			pr_perf_parse_trailer(&rec->sid, attr,
					      rec->body + rec->body_size);
	}
	return 1;
}

int pr_perf_pt_info(struct pr_pt_info *info, const struct pr_perf_rec *rec)
{
	const uint8_t *priv;

	if (!info || !rec || rec->type != PR_REC_AUXTRACE_INFO)
		return -1;
	memset(info, 0, sizeof(*info));
	/* u32 type, u32 reserved, then at least 10 u64 of intel_pt data */
	if (rec->body_size < 8 + 10 * 8 || pr_get32(rec->body) != 1)
		return -1;
	priv = rec->body + 8;
	info->pmu_type = (uint32_t)pr_get64(priv);
	info->time_shift = (uint16_t)pr_get64(priv + 8);
	info->time_mult = (uint32_t)pr_get64(priv + 16);
	info->time_zero = pr_get64(priv + 24);
	info->cap_user_time_zero = (int)pr_get64(priv + 32);
	info->have_sched_switch = pr_get64(priv + 56);
	info->per_cpu_mmaps = (int)pr_get64(priv + 72);
	if (info->time_shift > 63 || !info->time_mult)
		return -1;
	info->valid = 1;
	return 0;
}

uint64_t pr_tsc_to_perf(const struct pr_pt_info *info, uint64_t tsc)
{
	uint64_t quot, rem;

	if (!info || !info->valid)
		return tsc;
	quot = tsc >> info->time_shift;
	rem = tsc & ((1ULL << info->time_shift) - 1);
	return info->time_zero + quot * info->time_mult +
	       ((rem * info->time_mult) >> info->time_shift);
}

uint64_t pr_perf_to_tsc(const struct pr_pt_info *info, uint64_t time)
{
	uint64_t t, quot, rem;

	if (!info || !info->valid)
		return time;
	if (time < info->time_zero)
		return 0;
	t = time - info->time_zero;
	quot = t / info->time_mult;
	rem = t % info->time_mult;
	return (quot << info->time_shift) +
	       (rem << info->time_shift) / info->time_mult;
}
