// SPDX-License-Identifier: GPL-2.0
/*
 * pdata: the perf.data reader and writer (pdata.h has the contract).
 *
 * Layout (tools/perf/Documentation/perf.data-file-format.txt): a 104-byte
 * header with the attrs and data sections, attrs of attr_size bytes each
 * (the perf_event_attr followed by the file section of its ids), and the
 * data section: records of struct perf_event_header { u32 type; u16 misc;
 * u16 size; }, an AUXTRACE record being followed by its trace bytes.
 */
#include "pdata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* the body of an AUXTRACE record: size, offset, reference, idx, tid, cpu */
#define AUXTRACE_BODY	40

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int pdata_fail(struct pdata *pd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pd->error, sizeof(pd->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int pdata_read_attrs(struct pdata *pd, uint64_t off, uint64_t size)
{
	uint64_t attr_size = pd->attr_size, n, i, nids = 0;

	if (attr_size < PDATA_MIN_ATTR_SIZE || attr_size > PDATA_MAX_ATTR_SIZE)
		return pdata_fail(pd, "bad attr size %llu",
				  (unsigned long long)attr_size);
	if (!size || size % attr_size)
		return pdata_fail(pd,
				  "attrs section is not a multiple of the attr size");
	if (off > pd->size || size > pd->size - off)
		return pdata_fail(pd, "attrs section beyond end of file");
	n = size / attr_size;
	if (n > PDATA_MAX_ATTRS)
		return pdata_fail(pd, "too many attrs (%llu)",
				  (unsigned long long)n);

	for (i = 0; i < n; ++i) {
		const uint8_t *a = pd->buf + off + i * attr_size;
		const uint8_t *ids = a + attr_size - sizeof(struct pdata_section);
		uint64_t ioff = get64(ids), isize = get64(ids + 8);
		struct pdata_attr *attr = &pd->attr[i];

		attr->raw = a;
		attr->type = get32(a);
		attr->config = get64(a + 8);
		attr->sample_type = get64(a + 24);
		attr->flags = get64(a + PDATA_ATTR_FLAGS_OFFSET);
		if (isize % 8 || ioff > pd->size || isize > pd->size - ioff)
			return pdata_fail(pd, "attr %llu: bad ids section",
					  (unsigned long long)i);
		nids += isize / 8;
		if (nids > PDATA_MAX_IDS)
			return pdata_fail(pd, "too many ids");
		attr->ids = pd->buf + ioff;
		attr->nr_ids = isize / 8;
	}
	pd->nattr = (uint32_t)n;
	pd->same_layout = 1;
	for (i = 1; i < n; ++i)
		if (pd->attr[i].sample_type != pd->attr[0].sample_type ||
		    (pd->attr[i].flags & PDATA_ATTR_SAMPLE_ID_ALL) !=
		    (pd->attr[0].flags & PDATA_ATTR_SAMPLE_ID_ALL))
			pd->same_layout = 0;
	return 0;
}

int pdata_init_mem(struct pdata *pd, const void *buf, size_t size,
		   unsigned int flags)
{
	uint64_t aoff, asize, doff, dsize;
	const uint8_t *b = buf;

	if (!pd)
		return -EINVAL;
	memset(pd, 0, sizeof(*pd));
	if (!buf)
		return pdata_fail(pd, "no data");
	pd->buf = b;
	pd->size = size;

	if (size < 16 || get64(b) != PDATA_MAGIC)
		return pdata_fail(pd, "not a perf.data file (bad magic)");
	if (get64(b + 8) == PDATA_PIPE_HEADER_SIZE) {
		if (!(flags & PDATA_PIPE))
			return pdata_fail(pd,
					  "pipe-mode perf.data is not supported; record to a file");
		pd->pipe = 1;
		pd->data_off = PDATA_PIPE_HEADER_SIZE;
		pd->data_size = size - PDATA_PIPE_HEADER_SIZE;
		return 0;
	}
	if (size < PDATA_HEADER_SIZE || get64(b + 8) != PDATA_HEADER_SIZE)
		return pdata_fail(pd, "truncated or unknown perf.data header");

	pd->attr_size = get64(b + 16);
	aoff = get64(b + 24);
	asize = get64(b + 32);
	doff = get64(b + 40);
	dsize = get64(b + 48);

	if (pdata_read_attrs(pd, aoff, asize) < 0)
		return -EINVAL;
	if (doff > size || dsize > size - doff)
		return pdata_fail(pd,
				  "data section (%llu bytes at %llu) beyond end of file (%zu bytes): truncated file?",
				  (unsigned long long)dsize,
				  (unsigned long long)doff, size);
	if (!dsize && size > doff)
		return pdata_fail(pd,
				  "the data section is empty but the file is not: perf record did not finish writing the header?");
	pd->data_off = doff;
	pd->data_size = dsize;
	return 0;
}

int pdata_open(struct pdata *pd, const char *path, unsigned int flags)
{
	char error[sizeof(pd->error)];
	struct stat st;
	void *map;
	int fd, err;

	if (!pd || !path)
		return -EINVAL;
	memset(pd, 0, sizeof(*pd));

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		err = -errno;
		pdata_fail(pd, "cannot open %s: %s", path, strerror(errno));
		return err;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pdata_fail(pd, "%s is not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return pdata_fail(pd, "%s is empty", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		err = -errno;
		pdata_fail(pd, "cannot map %s: %s", path, strerror(errno));
		return err;
	}

	err = pdata_init_mem(pd, map, (size_t)st.st_size, flags);
	pd->mapped = 1;
	if (err < 0) {
		memcpy(error, pd->error, sizeof(error));
		pdata_close(pd);
		memcpy(pd->error, error, sizeof(error));
	}
	return err;
}

void pdata_close(struct pdata *pd)
{
	if (!pd)
		return;
	if (pd->mapped && pd->buf)
		munmap((void *)pd->buf, pd->size);
	pd->buf = NULL;
	pd->mapped = 0;
}

void pdata_rewind(struct pdata *pd)
{
	pd->pos = 0;
}

int pdata_next(struct pdata *pd, struct pdata_rec *rec)
{
	uint64_t left, size;
	const uint8_t *p;

	if (!pd || !rec || !pd->buf)
		return -EINVAL;
	memset(rec, 0, sizeof(*rec));

	left = pd->data_size - pd->pos;
	if (!left)
		return 0;
	if (left < 8)
		return pdata_fail(pd, "truncated record header at offset %llu",
				  (unsigned long long)(pd->data_off + pd->pos));

	p = pd->buf + pd->data_off + pd->pos;
	rec->hdr = p;
	rec->offset = pd->data_off + pd->pos;
	rec->type = get32(p);
	rec->misc = get16(p + 4);
	size = get16(p + 6);
	if (size < 8 || size > left)
		return pdata_fail(pd,
				  "record of type %u at offset %llu has bad size %llu",
				  rec->type, (unsigned long long)rec->offset,
				  (unsigned long long)size);
	rec->size = (uint16_t)size;
	rec->body = p + 8;
	rec->body_size = size - 8;

	if (rec->type == PDATA_REC_AUXTRACE) {
		uint64_t aux;

		if (rec->body_size < AUXTRACE_BODY - 8)
			return pdata_fail(pd,
					  "AUXTRACE record at offset %llu is too small",
					  (unsigned long long)rec->offset);
		aux = get64(rec->body);
		if (aux > left - size)
			return pdata_fail(pd,
					  "AUXTRACE data at offset %llu (%llu bytes) beyond end of data: truncated file?",
					  (unsigned long long)rec->offset,
					  (unsigned long long)aux);
		rec->aux = p + size;
		rec->aux_size = aux;
		pd->pos += aux;
	}
	pd->pos += size;
	return 1;
}

size_t pdata_sid_size(uint64_t st)
{
	size_t size = 0;

	if (st & PDATA_ST_TID)
		size += 8;
	if (st & PDATA_ST_TIME)
		size += 8;
	if (st & PDATA_ST_ID)
		size += 8;
	if (st & PDATA_ST_STREAM_ID)
		size += 8;
	if (st & PDATA_ST_CPU)
		size += 8;
	if (st & PDATA_ST_IDENTIFIER)
		size += 8;
	return size;
}

const struct pdata_attr *pdata_rec_attr(const struct pdata *pd,
					const struct pdata_rec *rec,
					int zero_is_first)
{
	uint64_t id, k;
	uint32_t i;

	if (!pd->nattr)
		return NULL;
	if (pd->same_layout)
		return &pd->attr[0];
	/* different layouts: PERF_SAMPLE_IDENTIFIER, the last u64, tells */
	if (rec->body_size < 8)
		return NULL;
	id = get64(rec->body + rec->body_size - 8);
	if (!id && zero_is_first)
		return &pd->attr[0];
	for (i = 0; i < pd->nattr; ++i)
		for (k = 0; k < pd->attr[i].nr_ids; ++k)
			if (get64(pd->attr[i].ids + k * 8) == id)
				return &pd->attr[i];
	return NULL;
}

int pdata_sample_id(struct pdata *pd, const struct pdata_rec *rec,
		    const struct pdata_attr *attr, struct pdata_sid *sid,
		    size_t *body_size)
{
	uint64_t st = attr->sample_type;
	const uint8_t *p;
	size_t tsize;

	memset(sid, 0, sizeof(*sid));
	*body_size = rec->body_size;
	if (!(attr->flags & PDATA_ATTR_SAMPLE_ID_ALL))
		return 0;
	tsize = pdata_sid_size(st);
	if (tsize > rec->body_size)
		return pdata_fail(pd,
				  "record of type %u at offset %llu is too small for its sample_id",
				  rec->type, (unsigned long long)rec->offset);
	*body_size = rec->body_size - tsize;
	p = rec->body + *body_size;
	sid->fields = st & (PDATA_ST_TID | PDATA_ST_TIME | PDATA_ST_ID |
			    PDATA_ST_STREAM_ID | PDATA_ST_CPU |
			    PDATA_ST_IDENTIFIER);
	if (st & PDATA_ST_TID) {
		sid->pid = get32(p);
		sid->tid = get32(p + 4);
		p += 8;
	}
	if (st & PDATA_ST_TIME) {
		sid->time = get64(p);
		p += 8;
	}
	if (st & PDATA_ST_ID) {
		sid->id = get64(p);
		p += 8;
	}
	if (st & PDATA_ST_STREAM_ID) {
		sid->stream_id = get64(p);
		p += 8;
	}
	if (st & PDATA_ST_CPU) {
		sid->cpu = get32(p);
		p += 8;
	}
	if (st & PDATA_ST_IDENTIFIER)
		sid->id = get64(p);
	return 0;
}

/* ---- intel_pt AUXTRACE_INFO and time ---- */

int pdata_pt_info(struct pdata_pt_info *info, const struct pdata_rec *rec)
{
	const uint8_t *priv;

	if (!info || !rec || rec->type != PDATA_REC_AUXTRACE_INFO)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	/* u32 type, u32 reserved, then at least 10 u64 of intel_pt data */
	if (rec->body_size < 8 + 10 * 8 ||
	    get32(rec->body) != PDATA_AUXTRACE_INTEL_PT)
		return -EINVAL;
	priv = rec->body + 8;
	info->pmu_type = (uint32_t)get64(priv + 8 * PDATA_PT_PMU_TYPE);
	info->time_shift = (uint16_t)get64(priv + 8 * PDATA_PT_TIME_SHIFT);
	info->time_mult = (uint32_t)get64(priv + 8 * PDATA_PT_TIME_MULT);
	info->time_zero = get64(priv + 8 * PDATA_PT_TIME_ZERO);
	info->cap_user_time_zero =
		(int)get64(priv + 8 * PDATA_PT_CAP_USER_TIME_ZERO);
	info->have_sched_switch =
		get64(priv + 8 * PDATA_PT_HAVE_SCHED_SWITCH);
	info->per_cpu_mmaps = (int)get64(priv + 8 * PDATA_PT_PER_CPU_MMAPS);
	if (rec->body_size >= 8 + 8 * (PDATA_PT_MAX_NONTURBO_RATIO + 1)) {
		info->has_timing = 1;
		info->mtc_bit = get64(priv + 8 * PDATA_PT_MTC_BIT);
		info->mtc_freq_bits = get64(priv + 8 * PDATA_PT_MTC_FREQ_BITS);
		info->tsc_ctc_n = (uint32_t)get64(priv + 8 * PDATA_PT_TSC_CTC_N);
		info->tsc_ctc_d = (uint32_t)get64(priv + 8 * PDATA_PT_TSC_CTC_D);
		info->cyc_bit = get64(priv + 8 * PDATA_PT_CYC_BIT);
		info->max_nonturbo_ratio =
			(uint32_t)get64(priv + 8 * PDATA_PT_MAX_NONTURBO_RATIO);
	}
	if (info->time_shift > 63 || !info->time_mult)
		return -EINVAL;
	info->valid = 1;
	return 0;
}

size_t pdata_pt_info_put(uint64_t *rec, size_t max_words,
			 const uint64_t priv[PDATA_PT_PRIV_MAX],
			 const char *filter)
{
	size_t flen = filter ? strlen(filter) : 0;
	/* header, type, priv[], the filter string, cap_event_trace */
	size_t words = 2 + PDATA_PT_PRIV_MAX +
		       (flen ? (flen + 1 + 7) / 8 : 0) + 1;
	uint32_t type = PDATA_REC_AUXTRACE_INFO;
	uint16_t size = (uint16_t)(words * 8);

	if (words > max_words || words * 8 > UINT16_MAX)
		return 0;
	memset(rec, 0, words * 8);
	memcpy(rec, &type, sizeof(type));
	memcpy((uint8_t *)rec + 6, &size, sizeof(size));
	rec[1] = PDATA_AUXTRACE_INTEL_PT;	/* type, reserved */
	memcpy(rec + 2, priv, PDATA_PT_PRIV_MAX * 8);
	rec[2 + PDATA_PT_FILTER_STR_LEN] = flen;
	if (flen)
		memcpy(rec + 2 + PDATA_PT_PRIV_MAX, filter, flen);
	return words * 8;
}

uint64_t pdata_tsc_to_time(uint64_t tsc, uint16_t time_shift,
			   uint32_t time_mult, uint64_t time_zero)
{
	uint64_t quot = tsc >> time_shift;
	uint64_t rem = tsc & ((1ULL << time_shift) - 1);

	return time_zero + quot * time_mult +
	       ((rem * time_mult) >> time_shift);
}

uint64_t pdata_time_to_tsc(uint64_t time, uint16_t time_shift,
			   uint32_t time_mult, uint64_t time_zero)
{
	uint64_t t, quot, rem;

	/* time_zero + f(tsc) wraps: a guest's time_zero is often "negative" */
	t = time - time_zero;
	if ((int64_t)t < 0 || !time_mult)
		return 0;
	quot = t / time_mult;
	rem = t % time_mult;
	return (quot << time_shift) + (rem << time_shift) / time_mult;
}

/* ---- the writer ---- */

static int pdata_put(struct pdata_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (n && fwrite(p, n, 1, w->f) != 1)
		w->err = -EIO;
	return w->err;
}

int pdata_write_begin(struct pdata_writer *w, FILE *f, uint64_t attr_size,
		      const struct pdata_wattr *attrs, size_t nr)
{
	const size_t sect = sizeof(struct pdata_section);
	static const uint8_t zeros[PDATA_MAX_ATTR_SIZE];
	struct pdata_section ids;
	uint64_t nids = 0;
	size_t i, k;

	memset(w, 0, sizeof(*w));
	w->f = f;
	if (attr_size < PDATA_MIN_ATTR_SIZE ||
	    attr_size > PDATA_MAX_ATTR_SIZE || !nr || nr > PDATA_MAX_ATTRS)
		return w->err = -EINVAL;
	for (i = 0; i < nr; i++) {
		if (attrs[i].size > attr_size - sect)
			return w->err = -EINVAL;
		nids += attrs[i].nr_ids;
	}
	if (nids > PDATA_MAX_IDS)
		return w->err = -EINVAL;

	w->h.magic = PDATA_MAGIC;
	w->h.size = sizeof(w->h);
	w->h.attr_size = attr_size;
	w->h.attrs.offset = sizeof(w->h) + nids * 8;
	w->h.attrs.size = nr * attr_size;
	w->h.data.offset = w->h.attrs.offset + w->h.attrs.size;
	pdata_put(w, &w->h, sizeof(w->h));
	for (i = 0; i < nr; i++)
		for (k = 0; k < attrs[i].nr_ids; k++)
			pdata_put(w, &attrs[i].ids[k], 8);
	ids.offset = sizeof(w->h);
	for (i = 0; i < nr; i++) {
		ids.size = attrs[i].nr_ids * 8;
		pdata_put(w, attrs[i].attr, attrs[i].size);
		pdata_put(w, zeros, attr_size - sect - attrs[i].size);
		pdata_put(w, &ids, sect);
		ids.offset += ids.size;
	}
	return w->err;
}

int pdata_write(struct pdata_writer *w, const void *p, size_t n)
{
	if (!pdata_put(w, p, n))
		w->h.data.size += n;
	return w->err;
}

void pdata_auxtrace_init(struct pdata_auxtrace *a, uint64_t len,
			 uint64_t reference, uint32_t idx, uint32_t tid,
			 uint32_t cpu)
{
	memset(a, 0, sizeof(*a));
	a->type = PDATA_REC_AUXTRACE;
	a->size = sizeof(*a);
	a->aux_size = (len + 7) & ~7ULL;
	a->reference = reference;
	a->idx = idx;
	a->tid = tid;
	a->cpu = cpu;
}

int pdata_write_auxtrace(struct pdata_writer *w,
			 const struct pdata_auxtrace *a, const void *trace,
			 size_t len)
{
	static const uint8_t zeros[64];
	uint64_t pad;

	if (a->aux_size < len)
		return w->err ? w->err : (w->err = -EINVAL);
	pdata_write(w, a, sizeof(*a));
	pdata_write(w, trace, len);
	for (pad = a->aux_size - len; pad && !w->err;) {
		size_t n = pad < sizeof(zeros) ? pad : sizeof(zeros);

		pdata_write(w, zeros, n);
		pad -= n;
	}
	return w->err;
}

int pdata_write_end(struct pdata_writer *w)
{
	long end;

	if (w->err)
		return w->err;
	end = ftell(w->f);
	if (end < 0 || fseek(w->f, 0, SEEK_SET))
		return w->err = -EIO;
	pdata_put(w, &w->h, sizeof(w->h));
	/* where the file ends, for the caller */
	if (!w->err && fseek(w->f, end, SEEK_SET))
		w->err = -EIO;
	return w->err;
}

size_t pdata_put_sid(void *dst, uint64_t st, const struct pdata_sid *sid)
{
	uint8_t *p = dst;
	uint32_t zero = 0;

	if (st & PDATA_ST_TID) {
		memcpy(p, &sid->pid, 4);
		memcpy(p + 4, &sid->tid, 4);
		p += 8;
	}
	if (st & PDATA_ST_TIME) {
		memcpy(p, &sid->time, 8);
		p += 8;
	}
	if (st & PDATA_ST_ID) {
		memcpy(p, &sid->id, 8);
		p += 8;
	}
	if (st & PDATA_ST_STREAM_ID) {
		memcpy(p, &sid->stream_id, 8);
		p += 8;
	}
	if (st & PDATA_ST_CPU) {
		memcpy(p, &sid->cpu, 4);
		memcpy(p + 4, &zero, 4);
		p += 8;
	}
	if (st & PDATA_ST_IDENTIFIER) {
		memcpy(p, &sid->id, 8);
		p += 8;
	}
	return (size_t)(p - (uint8_t *)dst);
}
