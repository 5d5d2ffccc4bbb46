/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _KERNEL_FLOWJIT_INTERNAL_H
#define _KERNEL_FLOWJIT_INTERNAL_H

#include <linux/flowjit.h>
#include <linux/types.h>
#include <linux/uidgid.h>

/*
 * One code object to report: FLOWJIT_OP_IMAGE carries @len bytes from
 * @bytes (kernel memory, stable while flowjit_emit() runs), split into
 * FLOWJIT_CHUNK_MAX sized records; FLOWJIT_OP_RETIRE carries none.
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
};

/* perf_event::flowjit_flags, set when the event is created */
#define FLOWJIT_EVENT_ALL_MM	BIT(0)	/* counted as tracking every mm */
#define FLOWJIT_EVENT_BPF_ALL	BIT(1)	/* may see every user's BPF code */

void flowjit_emit(const struct flowjit_image *img);
bool flowjit_enabled(void);

/* exposed for the KUnit tests */
void flowjit_csum_setup(void);
const char *flowjit_csum_driver(void);
u32 flowjit_csum(const void *bytes, size_t len);
u32 flowjit_chunk_len(const struct flowjit_image *img, u32 off);
bool flowjit_tracks_all(void);
void flowjit_record_init(struct flowjit_record *rec,
			 const struct flowjit_image *img, u32 csum, u32 off);

#endif /* _KERNEL_FLOWJIT_INTERNAL_H */
