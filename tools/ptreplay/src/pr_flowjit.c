// SPDX-License-Identifier: GPL-2.0
/*
 * pr_flowjit: flowjit record parsing, CRC-32C and chunk reassembly.
 */
#include "pr_flowjit.h"
#include "pr_perf.h"

#include <stdlib.h>
#include <string.h>

int pr_fj_parse(struct pr_fj_rec *rec, const uint8_t *body, size_t size)
{
	if (!rec || !body || size < PR_FJ_REC_SIZE)
		return -1;
	memset(rec, 0, sizeof(*rec));
	rec->version = pr_get16(body);
	if (rec->version != PR_FJ_VERSION)
		return 1;
	rec->kind = body[2];
	rec->op = body[3];
	rec->flags = pr_get32(body + 4);
	rec->asid = pr_get64(body + 8);
	rec->pid = pr_get32(body + 16);
	rec->tid = pr_get32(body + 20);
	rec->addr = pr_get64(body + 24);
	rec->len = pr_get64(body + 32);
	rec->id = pr_get64(body + 40);
	rec->sub = pr_get32(body + 48);
	rec->revision = pr_get32(body + 52);
	rec->csum = pr_get32(body + 56);
	rec->chunk_off = pr_get32(body + 60);
	rec->chunk_len = pr_get32(body + 64);
	rec->bytes = body + PR_FJ_REC_SIZE;

	if (!rec->kind || rec->kind > PR_FJ_USER_JIT)
		return -1;
	if (rec->op != PR_FJ_OP_IMAGE && rec->op != PR_FJ_OP_RETIRE)
		return -1;
	if (!rec->len || rec->addr + rec->len < rec->addr)
		return -1;
	if (rec->op == PR_FJ_OP_RETIRE)
		return rec->chunk_len ? -1 : 0;
	if (!rec->chunk_len || rec->chunk_len > PR_FJ_CHUNK_MAX)
		return -1;
	if (rec->chunk_len > size - PR_FJ_REC_SIZE)
		return -1;
	if ((uint64_t)rec->chunk_off + rec->chunk_len > rec->len)
		return -1;
	return 0;
}

uint32_t pr_crc32c(const uint8_t *buf, size_t len)
{
	static uint32_t table[256];
	static int ready;
	uint32_t crc = ~0U;
	size_t i;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		uint32_t n, k, c;

		for (n = 0; n < 256; ++n) {
			c = n;
			for (k = 0; k < 8; ++k)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78U : c >> 1;
			table[n] = c;
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	for (i = 0; i < len; ++i)
		crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

void pr_fj_asm_init(struct pr_fj_asm *as)
{
	if (as)
		memset(as, 0, sizeof(*as));
}

static void pr_fj_pending_free(struct pr_fj_pending *p)
{
	free(p->bytes);
	free(p->have);
}

void pr_fj_asm_fini(struct pr_fj_asm *as)
{
	size_t i;

	if (!as)
		return;
	for (i = 0; i < as->npending; ++i)
		pr_fj_pending_free(&as->pending[i]);
	free(as->pending);
	as->pending = NULL;
	as->npending = as->cap = 0;
}

static int pr_fj_same(const struct pr_fj_rec *a, const struct pr_fj_rec *b)
{
	return a->kind == b->kind && a->asid == b->asid &&
	       a->pid == b->pid && a->addr == b->addr && a->len == b->len &&
	       a->revision == b->revision && a->csum == b->csum &&
	       a->id == b->id && a->sub == b->sub;
}

static void pr_fj_remove(struct pr_fj_asm *as, size_t idx)
{
	as->pending_bytes -= as->pending[idx].rec.len;
	as->pending[idx] = as->pending[as->npending - 1];
	as->npending -= 1;
}

int pr_fj_asm_add(struct pr_fj_asm *as, const struct pr_fj_rec *rec,
		  uint64_t time, struct pr_fj_image *image)
{
	struct pr_fj_pending *p = NULL;
	uint64_t i;
	size_t idx;

	if (!as || !rec || !image || rec->op != PR_FJ_OP_IMAGE)
		return -1;

	if (rec->len > PR_FJ_IMAGE_MAX) {
		as->too_large += 1;
		return 0;
	}

	for (idx = 0; idx < as->npending; ++idx)
		if (pr_fj_same(&as->pending[idx].rec, rec)) {
			p = &as->pending[idx];
			break;
		}

	if (!p) {
		if (as->pending_bytes + rec->len > PR_FJ_PENDING_MAX) {
			as->too_large += 1;
			return 0;
		}
		if (as->npending == as->cap) {
			size_t cap = as->cap ? 2 * as->cap : 8;
			struct pr_fj_pending *n;

			n = realloc(as->pending, cap * sizeof(*n));
			if (!n)
				return -1;
			as->pending = n;
			as->cap = cap;
		}
		p = &as->pending[as->npending];
		memset(p, 0, sizeof(*p));
		p->rec = *rec;
		p->rec.bytes = NULL;
		p->time = time;
		p->bytes = malloc(rec->len);
		p->have = calloc((rec->len + 7) / 8, 1);
		if (!p->bytes || !p->have) {
			pr_fj_pending_free(p);
			return -1;
		}
		idx = as->npending++;
		as->pending_bytes += rec->len;
	}

	for (i = 0; i < rec->chunk_len; ++i) {
		uint64_t off = rec->chunk_off + i;
		uint8_t bit = (uint8_t)(1u << (off & 7));

		if (p->have[off / 8] & bit) {
			p->overlap = 1;
			continue;
		}
		p->have[off / 8] |= bit;
		p->bytes[off] = rec->bytes[i];
		p->got += 1;
	}

	if (p->got < p->rec.len)
		return 0;

	if (p->overlap) {
		as->overlap += 1;
		pr_fj_pending_free(p);
		pr_fj_remove(as, idx);
		return 0;
	}
	if (pr_crc32c(p->bytes, p->rec.len) != p->rec.csum) {
		as->bad_csum += 1;
		pr_fj_pending_free(p);
		pr_fj_remove(as, idx);
		return 0;
	}

	image->rec = p->rec;
	image->bytes = p->bytes;
	image->time = p->time;
	free(p->have);
	pr_fj_remove(as, idx);
	as->complete += 1;
	return 1;
}

void pr_fj_asm_finish(struct pr_fj_asm *as)
{
	if (!as)
		return;
	while (as->npending) {
		as->incomplete += 1;
		pr_fj_pending_free(&as->pending[as->npending - 1]);
		pr_fj_remove(as, as->npending - 1);
	}
}
