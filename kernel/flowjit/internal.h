/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _KERNEL_FLOWJIT_INTERNAL_H
#define _KERNEL_FLOWJIT_INTERNAL_H

#include <linux/flowjit.h>
#include <linux/types.h>
#include <linux/uidgid.h>

/*
 * One code object to report: FLOWJIT_OP_IMAGE carries @len bytes from
 * @bytes (kernel memory, stable while flowjit_emit() runs), split into
 * FLOWJIT_CHUNK_MAX sized records; FLOWJIT_OP_RETIRE carries none. An
 * image with @npieces goes as a FLOWJIT_OP_DELTA record against revision
 * @base, the @pieces of @bytes (@delta_len bytes with their headers), to
 * the events that asked for deltas (attr.flowjit_delta).
 */
struct flowjit_image {
	u8		kind;
	u8		op;
	u32		flags;
	u64		asid;
	u64		addr;
	u64		len;
	u64		id;
	u32		sub;
	u32		revision;
	const void	*bytes;
	bool		has_csum;	/* @csum is flowjit_csum() of @bytes */
	u32		csum;
	bool		has_owner;	/* BPF code: @owner loaded it */
	kuid_t		owner;
	const struct flowjit_delta_piece *pieces;
	unsigned int	npieces;
	u32		delta_len;
	u32		base;
};

/* perf_event::flowjit_flags, set when the event is created */
#define FLOWJIT_EVENT_ALL_MM	BIT(0)	/* counted as tracking every mm */
#define FLOWJIT_EVENT_BPF_ALL	BIT(1)	/* may see every user's BPF code */

void flowjit_emit(const struct flowjit_image *img);
bool flowjit_enabled(void);

/*
 * Deltas: whether an event asked for them, and a count that moves when a
 * record could not be written (a reader may lack any base from before).
 */
bool flowjit_deltas_wanted(void);
u32 flowjit_lost_gen(void);

/* the pieces a delta cut in blocks of this size carries, at most */
#define FLOWJIT_DELTA_BLOCK	16
#define FLOWJIT_DELTA_PIECES	64
unsigned int flowjit_delta_pieces(u8 *old, const u8 *new, u32 len,
				  struct flowjit_delta_piece *pieces,
				  u32 *delta_len, bool update);

/* exposed for the KUnit tests */
void flowjit_csum_setup(void);
const char *flowjit_csum_driver(void);
u32 flowjit_csum(const void *bytes, size_t len);
u32 flowjit_csum_sparse(const u8 *bytes, u32 len,
			const struct flowjit_delta_piece *pieces,
			unsigned int n);
u32 flowjit_chunk_len(const struct flowjit_image *img, u32 off);
bool flowjit_tracks_all(void);
void flowjit_record_init(struct flowjit_record *rec,
			 const struct flowjit_image *img, u32 csum, u32 off);

#endif /* _KERNEL_FLOWJIT_INTERNAL_H */
