// SPDX-License-Identifier: GPL-2.0
/*
 * libflowjit: check one PERF_RECORD_FLOWJIT record, and say which records
 * are chunks of one image.
 */
#include <errno.h>
#include <string.h>

#include "libflowjit.h"

static const char * const flowjit_kinds[FLOWJIT_KIND_MAX] = {
	[FLOWJIT_KIND_BPF_PROG]		= "bpf_prog",
	[FLOWJIT_KIND_BPF_SUBPROG]	= "bpf_subprog",
	[FLOWJIT_KIND_BPF_TRAMPOLINE]	= "bpf_trampoline",
	[FLOWJIT_KIND_BPF_DISPATCHER]	= "bpf_dispatcher",
	[FLOWJIT_KIND_TEXT_POKE]	= "text_poke",
	[FLOWJIT_KIND_MODULE_TEXT]	= "module_text",
	[FLOWJIT_KIND_USER_JIT]		= "user_jit",
};

/* Returns the name of @kind, "unknown" if it has none. */
const char *flowjit_kind_name(unsigned int kind)
{
	if (kind >= FLOWJIT_KIND_MAX || !flowjit_kinds[kind])
		return "unknown";
	return flowjit_kinds[kind];
}

/* Returns the name of @op, "UNKNOWN" if it has none. */
const char *flowjit_op_name(unsigned int op)
{
	switch (op) {
	case FLOWJIT_OP_IMAGE:
		return "IMAGE";
	case FLOWJIT_OP_RETIRE:
		return "RETIRE";
	case FLOWJIT_OP_DELTA:
		return "DELTA";
	default:
		return "UNKNOWN";
	}
}

/*
 * Returns NULL if the pieces of delta @rec, @bytes of rec->chunk_len,
 * fill them exactly, each inside the object, increasing and apart; or why
 * not.
 */
static const char *flowjit_delta_bad(const struct flowjit_record *rec,
				     const uint8_t *bytes)
{
	struct flowjit_delta_piece piece;
	uint32_t at = 0, next = 0;

	if (rec->chunk_off)
		return "delta in chunks";
	/* base 0: over zeros */
	if (rec->base >= rec->revision)
		return "delta base is not an earlier revision";
	if (rec->len > FLOWJIT_DELTA_LEN_MAX)
		return "delta object longer than FLOWJIT_DELTA_LEN_MAX";
	while (at < rec->chunk_len) {
		if (rec->chunk_len - at < sizeof(piece))
			return "delta piece truncated";
		memcpy(&piece, bytes + at, sizeof(piece));
		at += sizeof(piece);
		if (!piece.len || piece.len > rec->chunk_len - at)
			return "delta piece empty or truncated";
		if (piece.off < next || piece.off + piece.len > rec->len)
			return "delta piece out of order or beyond its object";
		next = piece.off + piece.len;
		at += piece.len;
	}
	return NULL;
}

/* Returns NULL if the chunk of @rec fits its object and @size, or why not. */
static const char *flowjit_chunk_bad(const struct flowjit_record *rec,
				     size_t size)
{
	if (rec->op == FLOWJIT_OP_RETIRE)
		return rec->chunk_len || rec->chunk_off ?
		       "retire record carries bytes" : NULL;
	if (!rec->chunk_len)
		return "empty chunk";
	if (rec->chunk_len > FLOWJIT_CHUNK_MAX)
		return "chunk larger than FLOWJIT_CHUNK_MAX";
	if (rec->op != FLOWJIT_OP_DELTA &&
	    (uint64_t)rec->chunk_off + rec->chunk_len > rec->len)
		return "chunk beyond the end of its object";
	if (rec->chunk_len > size - sizeof(*rec))
		return "truncated: record shorter than its chunk";
	return NULL;
}

/* Returns NULL if the fixed part of @rec is consistent, or why not. */
static const char *flowjit_rec_bad(const struct flowjit_record *rec)
{
	if (!rec->kind || rec->kind >= FLOWJIT_KIND_MAX)
		return "unknown kind";
	if (rec->op != FLOWJIT_OP_IMAGE && rec->op != FLOWJIT_OP_RETIRE &&
	    rec->op != FLOWJIT_OP_DELTA)
		return "unknown op";
	if (rec->op != FLOWJIT_OP_DELTA && rec->base)
		return "base set in a record that is no delta";
	if (!rec->len)
		return "empty object";
	if (rec->addr + rec->len < rec->addr)
		return "object wraps around the address space";
	return NULL;
}

int flowjit_chunk_parse(struct flowjit_chunk *chunk, const void *body,
			size_t size, const char **why)
{
	const char *reason;

	if (!chunk || !body) {
		reason = "no record";
		goto bad;
	}
	memset(chunk, 0, sizeof(*chunk));
	if (size < sizeof(chunk->rec)) {
		reason = "truncated: shorter than struct flowjit_record";
		goto bad;
	}
	/* the body follows an 8-byte header: memcpy, no alignment assumed */
	memcpy(&chunk->rec, body, sizeof(chunk->rec));
	if (chunk->rec.version != FLOWJIT_RECORD_VERSION) {
		if (why)
			*why = "unknown record version";
		return -EOPNOTSUPP;
	}
	reason = flowjit_rec_bad(&chunk->rec);
	if (!reason)
		reason = flowjit_chunk_bad(&chunk->rec, size);
	if (!reason && chunk->rec.op == FLOWJIT_OP_DELTA)
		reason = flowjit_delta_bad(&chunk->rec, (const uint8_t *)body +
					   sizeof(chunk->rec));
	if (reason)
		goto bad;
	if (chunk->rec.chunk_len)
		chunk->bytes = (const uint8_t *)body + sizeof(chunk->rec);
	return 0;
bad:
	if (why)
		*why = reason;
	return -EINVAL;
}

/*
 * The one definition of an image's chunks: records equal in every field
 * but chunk_off and chunk_len (struct flowjit_record has no padding).
 */
bool flowjit_rec_same_image(const struct flowjit_record *a,
			    const struct flowjit_record *b)
{
	struct flowjit_record x = *a, y = *b;

	x.chunk_off = 0;
	x.chunk_len = 0;
	y.chunk_off = 0;
	y.chunk_len = 0;
	return !memcmp(&x, &y, sizeof(x));
}
