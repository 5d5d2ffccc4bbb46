// SPDX-License-Identifier: GPL-2.0-only
/*
 * flowjit: runtime code images for branch trace decoders.
 *
 * Perf events with attr.flowjit receive PERF_RECORD_FLOWJIT records (see
 * include/uapi/linux/flowjit.h) whenever a capture path reports code
 * through flowjit_emit(). This file holds what all capture paths share:
 * the system-wide switch, the static key behind every hook, the checks
 * made when such an event is opened, and the record output.
 */
#include <crypto/hash.h>
#include <linux/capability.h>
#include <linux/crc32.h>
#include <linux/cred.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/security.h>
#include <linux/sysctl.h>

#include "base.h"
#include "internal.h"

/*
 * Enabled while at least one perf event with attr.flowjit exists; every
 * hook tests it first. Disabling is deferred by a second so that tools
 * opening and closing events in a loop do not patch text each time.
 */
DEFINE_STATIC_KEY_DEFERRED_FALSE(flowjit_active, HZ);

/* kernel.flowjit: 0 disables flowjit system-wide, 1 (default) allows it. */
static int sysctl_flowjit = 1;

static struct ctl_table flowjit_sysctls[] = {
	{
		.procname	= "flowjit",
		.data		= &sysctl_flowjit,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{ }
};

/* kernel.flowjit is 1: records are written and address spaces tracked */
bool flowjit_enabled(void)
{
	return READ_ONCE(sysctl_flowjit);
}

/*
 * Called by perf_event_open() for every attr; returns 0 or -errno.
 *
 * Images are versioned by time, so records must carry it. Kernel code
 * bytes are kernel data: perf_event_open() has already applied
 * perf_allow_kernel() (perf_event_paranoid, CAP_PERFMON) to an event that
 * does not exclude the kernel; add what bpf(2) requires to dump JIT
 * images (kallsyms_show_value(), as bpf_dump_raw_ok()) and what
 * /proc/kcore requires under lockdown.
 */
int flowjit_perf_event_open(const struct perf_event_attr *attr)
{
	if (!attr->flowjit)
		return attr->flowjit_delta ? -EINVAL : 0;
	if (!attr->sample_id_all || !(attr->sample_type & PERF_SAMPLE_TIME))
		return -EINVAL;
	if (attr->exclude_kernel && attr->exclude_user)
		return -EINVAL;
	if (!READ_ONCE(sysctl_flowjit))
		return -EACCES;
	if (attr->exclude_kernel)
		return 0;
	if (!kallsyms_show_value(current_cred()))
		return -EACCES;
	return security_locked_down(LOCKDOWN_KCORE);
}

/*
 * Who may see which BPF code, decided once, by the task that creates the
 * event (an inherited event keeps its parent's decision). bpf(2) gives
 * the JIT image of a program to a holder of a file of it, and a file of
 * any program, by ID, only to CAP_SYS_ADMIN (BPF_PROG_GET_FD_BY_ID). So
 * the code of programs that other users loaded, and trampolines, which
 * belong to no single user, go only to events created with CAP_SYS_ADMIN;
 * CAP_PERFMON alone gets the programs of its own user.
 */
static void flowjit_event_set_owner(struct perf_event *event)
{
	if (event->parent) {
		event->flowjit_flags = event->parent->flowjit_flags &
				       FLOWJIT_EVENT_BPF_ALL;
		event->flowjit_uid = event->parent->flowjit_uid;
		return;
	}
	event->flowjit_flags = 0;
	event->flowjit_uid = current_uid();
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		event->flowjit_flags |= FLOWJIT_EVENT_BPF_ALL;
}

/* events that take delta records */
static atomic_t flowjit_delta_users = ATOMIC_INIT(0);
/* moves when a record could not be written */
static atomic_t flowjit_lost = ATOMIC_INIT(0);

bool flowjit_deltas_wanted(void)
{
	return atomic_read(&flowjit_delta_users);
}

u32 flowjit_lost_gen(void)
{
	return atomic_read(&flowjit_lost);
}

void flowjit_account_event(struct perf_event *event)
{
	if (!event->attr.flowjit)
		return;
	if (event->attr.flowjit_delta)
		atomic_inc(&flowjit_delta_users);
	flowjit_event_set_owner(event);
	flowjit_csum_setup();
	static_branch_inc(&flowjit_active.key);
	flowjit_perf_event_account(event);
}

void flowjit_unaccount_event(struct perf_event *event)
{
	if (!event->attr.flowjit)
		return;
	if (event->attr.flowjit_delta)
		atomic_dec(&flowjit_delta_users);
	flowjit_perf_event_detach(event);
	static_branch_slow_dec_deferred(&flowjit_active);
}

/*
 * CRC-32C, as documented in uapi/linux/flowjit.h: every user JIT snapshot
 * checksums a page. The tables of lib/crc32 take microseconds for that
 * on current x86 CPUs, the SSE4.2 crc32 instruction (crc32c-intel) a
 * fraction of it. That driver is often a module, loaded by udev for the
 * CPU after built-in users such as lib/libcrc32c have settled for the
 * generic one; so the crypto API is asked for its best "crc32c" when the
 * first flowjit event is opened. The tables serve until then, and in
 * kernels without the crypto API's hashes.
 */
#if IS_BUILTIN(CONFIG_CRYPTO_HASH)
static struct crypto_shash *flowjit_crc_tfm __read_mostly;

void flowjit_csum_setup(void)
{
	struct crypto_shash *tfm;

	if (READ_ONCE(flowjit_crc_tfm))
		return;
	tfm = crypto_alloc_shash("crc32c", 0, 0);
	if (IS_ERR(tfm))
		return;
	/* see flowjit_crc_update(): the context is the running CRC */
	if (crypto_shash_descsize(tfm) != sizeof(u32)) {
		crypto_free_shash(tfm);
		return;
	}
	if (cmpxchg(&flowjit_crc_tfm, NULL, tfm)) {
		crypto_free_shash(tfm);
		return;
	}
	pr_info("flowjit: CRC-32C by %s\n", crypto_shash_driver_name(tfm));
}

const char *flowjit_csum_driver(void)
{
	struct crypto_shash *tfm = READ_ONCE(flowjit_crc_tfm);

	return tfm ? crypto_shash_driver_name(tfm) : NULL;
}

/* the CRC-32C register @crc after @len bytes, as __crc32c_le() */
static u32 flowjit_crc_update(u32 crc, const void *bytes, size_t len)
{
	struct crypto_shash *tfm = READ_ONCE(flowjit_crc_tfm);

	if (tfm) {
		/*
		 * The crc32c drivers keep the running CRC as their context,
		 * and flowjit_csum_setup() took only such a driver: a
		 * descriptor of that size, not SHASH_DESC_ON_STACK()'s
		 * largest one, which kernels built to zero the stack
		 * (INIT_STACK_ALL_ZERO) clear on every call.
		 */
		char desc_buf[sizeof(struct shash_desc) + sizeof(u32)]
			__aligned(__alignof__(struct shash_desc));
		struct shash_desc *desc = (struct shash_desc *)desc_buf;
		u32 *ctx = shash_desc_ctx(desc);

		desc->tfm = tfm;
		*ctx = crc;
		if (!crypto_shash_update(desc, bytes, len))
			return *ctx;
	}
	return __crc32c_le(crc, bytes, len);
}
#else
void flowjit_csum_setup(void)
{
}

const char *flowjit_csum_driver(void)
{
	return NULL;
}

static u32 flowjit_crc_update(u32 crc, const void *bytes, size_t len)
{
	return __crc32c_le(crc, bytes, len);
}
#endif

u32 flowjit_csum(const void *bytes, size_t len)
{
	return ~flowjit_crc_update(~0U, bytes, len);
}

/*
 * A CRC register is a polynomial over GF(2), bit 31 its x^0 (CRC-32C is
 * bit-reflected), and a zero byte multiplies it by x^8 modulo the
 * polynomial. So a run of zeros costs one multiplication, not a pass
 * over the bytes: flowjit_crc_x16[k] is x^(8 * 16 * k), for runs of
 * whole delta blocks up to a page. flowjit_crc_x4[w] is what the four
 * terms of highest degree (the low four bits, @w) become times x^4.
 */
#define FLOWJIT_CRC_ONE		BIT(31)
#define FLOWJIT_CRC_POLY	0x82f63b78	/* x^32 taken, bit-reflected */
static u32 flowjit_crc_x16[PAGE_SIZE / FLOWJIT_DELTA_BLOCK + 1] __read_mostly;
static u32 flowjit_crc_x4[16] __read_mostly;
static u32 flowjit_crc_zero_page __read_mostly;	/* of a page of zeros */
static bool flowjit_crc_ready __read_mostly;

/* @b * x */
static u32 flowjit_crc_mulx(u32 b)
{
	return (b >> 1) ^ (FLOWJIT_CRC_POLY & -(b & 1));
}

/* @a * @b modulo the CRC-32C polynomial, a bit of @a at a time (tables) */
static u32 __init flowjit_crc_mul_bits(u32 a, u32 b)
{
	u32 p = 0;
	int i;

	for (i = 31; i >= 0; i--) {
		p ^= b & -((a >> i) & 1);	/* + b * x^(31 - i) */
		b = flowjit_crc_mulx(b);
	}
	return p;
}

/* @p times x^4, plus the four terms @v (low four bits) of @m's factor */
static __always_inline u32 flowjit_crc_mul4(u32 p, const u32 *m, u32 v)
{
	return (p >> 4) ^ flowjit_crc_x4[p & 15] ^ m[v & 15];
}

/*
 * @a * @b, four bits of @a at a time (Horner's rule from its highest
 * degree), once flowjit_crc_x4[] is set up. Written out: with loops,
 * GCC made it about 280 instructions, most of a fresh page's checksum;
 * this is about 110.
 */
static u32 flowjit_crc_mul(u32 a, u32 b)
{
	u32 m[16], p;

	/* m[v]: @b times the four terms of v, bit 3 of v the lowest */
	m[0] = 0;
	m[8] = b;
	m[4] = flowjit_crc_mulx(m[8]);
	m[2] = flowjit_crc_mulx(m[4]);
	m[1] = flowjit_crc_mulx(m[2]);
	m[3] = m[2] ^ m[1];
	m[5] = m[4] ^ m[1];
	m[6] = m[4] ^ m[2];
	m[7] = m[6] ^ m[1];
	m[9] = m[8] ^ m[1];
	m[10] = m[8] ^ m[2];
	m[11] = m[10] ^ m[1];
	m[12] = m[8] ^ m[4];
	m[13] = m[12] ^ m[1];
	m[14] = m[12] ^ m[2];
	m[15] = m[14] ^ m[1];
	p = m[a & 15];
	p = flowjit_crc_mul4(p, m, a >> 4);
	p = flowjit_crc_mul4(p, m, a >> 8);
	p = flowjit_crc_mul4(p, m, a >> 12);
	p = flowjit_crc_mul4(p, m, a >> 16);
	p = flowjit_crc_mul4(p, m, a >> 20);
	p = flowjit_crc_mul4(p, m, a >> 24);
	return flowjit_crc_mul4(p, m, a >> 28);
}

/* the register @crc after @len zero bytes */
static u32 flowjit_crc_zeros(u32 crc, u32 len)
{
	if (!crc || !len)
		return crc;
	/* the tables are made before they are said ready */
	if (smp_load_acquire(&flowjit_crc_ready) && len <= PAGE_SIZE &&
	    !(len % FLOWJIT_DELTA_BLOCK))
		return flowjit_crc_mul(crc,
				       flowjit_crc_x16[len / FLOWJIT_DELTA_BLOCK]);
	return __crc32c_le_shift(crc, len);
}

static void __init flowjit_crc_init(void)
{
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(flowjit_crc_x4); k++)
		flowjit_crc_x4[k] = flowjit_crc_mul_bits(k, BIT(31 - 4)); /* x^4 */
	flowjit_crc_x16[0] = FLOWJIT_CRC_ONE;
	flowjit_crc_x16[1] = __crc32c_le_shift(FLOWJIT_CRC_ONE,
					       FLOWJIT_DELTA_BLOCK);
	for (k = 2; k < ARRAY_SIZE(flowjit_crc_x16); k++)
		flowjit_crc_x16[k] = flowjit_crc_mul(flowjit_crc_x16[k - 1],
						     flowjit_crc_x16[1]);
	flowjit_crc_zero_page = ~__crc32c_le_shift(~0U, PAGE_SIZE);
	/* pairs with smp_load_acquire() in the users of the tables */
	smp_store_release(&flowjit_crc_ready, true);
}

/*
 * flowjit_csum() of @len bytes that are @bytes' in @pieces (@n of them,
 * in order) and zero elsewhere, from the pieces' bytes alone: the CRC is
 * linear, so it is the CRC of that many zeros plus each piece's bytes
 * followed by the zeros after it. A piece costs a multiplication after
 * it (about 120 instructions) instead of a pass over the zeros: worth it
 * for the few pieces of a JIT's fresh page, not for many.
 */
u32 flowjit_csum_sparse(const u8 *bytes, u32 len,
			const struct flowjit_delta_piece *pieces,
			unsigned int n)
{
	u32 crc = 0, at = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		crc = flowjit_crc_zeros(crc, pieces[i].off - at);
		crc = flowjit_crc_update(crc, bytes + pieces[i].off,
					 pieces[i].len);
		at = pieces[i].off + pieces[i].len;
	}
	crc = flowjit_crc_zeros(crc, len - at);
	/* as in flowjit_crc_zeros() */
	if (len == PAGE_SIZE && smp_load_acquire(&flowjit_crc_ready))
		return flowjit_crc_zero_page ^ crc;
	return ~__crc32c_le_shift(~0U, len) ^ crc;
}

/* bytes in the chunk of @img that starts at @off */
u32 flowjit_chunk_len(const struct flowjit_image *img, u32 off)
{
	if (img->op != FLOWJIT_OP_IMAGE || off >= img->len)
		return 0;
	return min_t(u64, img->len - off, FLOWJIT_CHUNK_MAX);
}

void flowjit_record_init(struct flowjit_record *rec,
			 const struct flowjit_image *img, u32 csum, u32 off)
{
	/*
	 * Every field named: the compiler stores each one, where it cleared
	 * the record first for the fields left out (a rep stos).
	 */
	*rec = (struct flowjit_record) {
		.version	= FLOWJIT_RECORD_VERSION,
		.kind		= img->kind,
		.op		= img->op,
		.flags		= img->flags,
		.asid		= img->asid,
		.pid		= 0,
		.tid		= 0,
		.addr		= img->addr,
		.len		= img->len,
		.id		= img->id,
		.sub		= img->sub,
		.revision	= img->revision,
		.csum		= csum,
		.chunk_off	= off,
		.chunk_len	= flowjit_chunk_len(img, off),
		.base		= 0,
	};
}

/* the bytes a compare skips at once when all of them are the same */
#define FLOWJIT_DELTA_GROUP	64

static __always_inline u64 flowjit_word(const u8 *p, u32 i)
{
	u64 w;

	memcpy(&w, p + i, sizeof(w));	/* one load, aligned or not */
	return w;
}

/* the XOR of the words at @a and @b at @i (@b NULL: zero) */
static __always_inline u64 flowjit_xw(const u8 *a, const u8 *b, u32 i)
{
	return flowjit_word(a, i) ^ (b ? flowjit_word(b, i) : 0);
}

/*
 * Do the 16 bytes (two words) or the 64 bytes (eight) at @a differ from
 * those at @b (@b NULL: from zero)? The OR of their XORs in one
 * expression, without a loop: a compare of a page is the largest part
 * of a tracked exec fault after the exception itself, and the loop the
 * compiler made of it (-O2 does not unroll) took six instructions a
 * word.
 */
static __always_inline u64 flowjit_diff16(const u8 *a, const u8 *b)
{
	return flowjit_xw(a, b, 0) | flowjit_xw(a, b, 8);
}

static __always_inline u64 flowjit_diff64(const u8 *a, const u8 *b)
{
	return flowjit_xw(a, b, 0) | flowjit_xw(a, b, 8) |
	       flowjit_xw(a, b, 16) | flowjit_xw(a, b, 24) |
	       flowjit_xw(a, b, 32) | flowjit_xw(a, b, 40) |
	       flowjit_xw(a, b, 48) | flowjit_xw(a, b, 56);
}

/*
 * Are the @blk bytes at @a and @b the same (@b NULL: zero)? A
 * FLOWJIT_DELTA_BLOCK word by word, a shorter one byte by byte.
 */
static __always_inline bool flowjit_block_same(const u8 *a, const u8 *b,
					       u32 blk)
{
	BUILD_BUG_ON(FLOWJIT_DELTA_BLOCK != 16);
	if (blk == FLOWJIT_DELTA_BLOCK)
		return b ? !flowjit_diff16(a, b) : !flowjit_diff16(a, NULL);
	return b ? !memcmp(a, b, blk) : !memchr_inv(a, 0, blk);
}

static __always_inline u64 flowjit_diff256(const u8 *a, const u8 *b)
{
	return flowjit_diff64(a, b) |
	       flowjit_diff64(a + 64, b ? b + 64 : NULL) |
	       flowjit_diff64(a + 128, b ? b + 128 : NULL) |
	       flowjit_diff64(a + 192, b ? b + 192 : NULL);
}

/* flowjit_skip_same() over a copy (@b) or zeros (@b NULL, a constant) */
static __always_inline u32 __flowjit_skip_same(const u8 *a, const u8 *b,
					       u32 off, u32 len)
{
	for (;;) {
		if (!(off % (4 * FLOWJIT_DELTA_GROUP)) &&
		    len - off >= 4 * FLOWJIT_DELTA_GROUP &&
		    !flowjit_diff256(a + off, b ? b + off : NULL)) {
			off += 4 * FLOWJIT_DELTA_GROUP;
			continue;
		}
		if (len - off < FLOWJIT_DELTA_GROUP ||
		    flowjit_diff64(a + off, b ? b + off : NULL))
			return off;
		off += FLOWJIT_DELTA_GROUP;
	}
}

/*
 * The offset of the first FLOWJIT_DELTA_GROUP at or after @off (a
 * multiple of it) where @new and @old (NULL: zero) differ, or after
 * which less than a group is left: identical groups skipped in loops of
 * their own, four groups at a time from a multiple of 256 bytes
 * (x86-64, GCC 12: 40 instructions over zeros, 101 over a copy), then
 * one (15 and 35).
 */
static u32 flowjit_skip_same(const u8 *new, const u8 *old, u32 off, u32 len)
{
	BUILD_BUG_ON(FLOWJIT_DELTA_GROUP != 64);
	if (!old)
		return __flowjit_skip_same(new, NULL, off, len);
	return __flowjit_skip_same(new, old, off, len);
}

/*
 * The blocks of @len bytes at @new that differ from @old (NULL: from
 * zeros), as delta pieces, adjacent blocks in one piece. Returns how
 * many, or 0 if there are none or a delta would not pay (more than
 * FLOWJIT_DELTA_PIECES, or more than half of @len bytes): then the whole
 * image goes. *@delta_len is what the record carries, the pieces'
 * headers included. With @update, @old becomes @new (only the blocks
 * that differ are copied).
 */
unsigned int flowjit_delta_pieces(u8 *old, const u8 *new, u32 len,
				  struct flowjit_delta_piece *pieces,
				  u32 *delta_len, bool update)
{
	unsigned int n = 0;
	u32 off, blk, dlen = 0;

	if (len > FLOWJIT_DELTA_LEN_MAX)
		n = FLOWJIT_DELTA_PIECES + 1;
	update = update && old;
	for (off = 0; off < len; off += blk) {
		if (!(off % FLOWJIT_DELTA_GROUP)) {
			off = flowjit_skip_same(new, old, off, len);
			if (off >= len)
				break;
		}
		blk = min_t(u32, FLOWJIT_DELTA_BLOCK, len - off);
		if (flowjit_block_same(new + off, old ? old + off : NULL, blk))
			continue;
		if (update)
			memcpy(old + off, new + off, blk);
		if (n > FLOWJIT_DELTA_PIECES)
			continue;	/* too many: only the update goes on */
		if (n && pieces[n - 1].off + pieces[n - 1].len == off) {
			pieces[n - 1].len += blk;
		} else if (n == FLOWJIT_DELTA_PIECES) {
			n++;
			continue;
		} else {
			pieces[n].off = off;
			pieces[n].len = blk;
			n++;
			dlen += sizeof(*pieces);
		}
		dlen += blk;
	}
	if (n > FLOWJIT_DELTA_PIECES || dlen > len / 2)
		return 0;
	*delta_len = dlen;
	return n;
}

struct flowjit_output {
	const struct flowjit_image	*img;
	u32				csum;
};

static bool flowjit_is_bpf(const struct flowjit_image *img)
{
	switch (img->kind) {
	case FLOWJIT_KIND_BPF_PROG:
	case FLOWJIT_KIND_BPF_SUBPROG:
	case FLOWJIT_KIND_BPF_TRAMPOLINE:
	case FLOWJIT_KIND_BPF_DISPATCHER:
		return true;
	}
	return false;
}

static bool flowjit_event_wants(struct perf_event *event,
				const struct flowjit_image *img)
{
	if (!event->attr.flowjit)
		return false;
	if (img->asid != FLOWJIT_ASID_KERNEL)
		return !event->attr.exclude_user;
	if (event->attr.exclude_kernel)
		return false;
	/* BPF code: see flowjit_event_set_owner() */
	if (flowjit_is_bpf(img) &&
	    !(event->flowjit_flags & FLOWJIT_EVENT_BPF_ALL))
		return img->has_owner && uid_eq(img->owner, event->flowjit_uid);
	return true;
}

/*
 * What a record has besides its bytes: the header and the record, then
 * the sample id (after the padding of the bytes, if any).
 */
struct flowjit_output_head {
	struct perf_event_header	header;
	struct flowjit_record		rec;
	u64				id[PERF_ID_SAMPLE_MAX];
};

static_assert(offsetof(struct flowjit_output_head, id) ==
	      sizeof(struct perf_event_header) + sizeof(struct flowjit_record));

/*
 * Where the next @len bytes of @handle go: the ring buffer itself when
 * they lie in its current page, else @stage (flowjit_output_done() copies
 * them there). Filling the fields in place saves the staging copy, which
 * costs more than the small fields do.
 */
static void *flowjit_output_at(struct perf_output_handle *handle,
			       unsigned int len, void *stage)
{
	return handle->size >= len ? handle->addr : stage;
}

static void flowjit_output_done(struct perf_output_handle *handle,
				const void *at, unsigned int len)
{
	if (at == handle->addr)
		perf_output_skip(handle, len);
	else
		perf_output_copy(handle, at, len);
}

/*
 * The padding (zeros) of a record's bytes, then its sample id; staged, the
 * padding ends the first word, so that the id stays aligned
 */
static void flowjit_output_tail(struct perf_output_handle *handle,
				struct perf_event *event,
				struct perf_sample_data *sample,
				unsigned int pad, unsigned int id_len)
{
	u64 stage[1 + PERF_ID_SAMPLE_MAX] __uninitialized;
	u8 *at = flowjit_output_at(handle, pad + id_len,
				   (u8 *)&stage[1] - pad);

	memset(at, 0, pad);
	perf_event__id_sample(event, sample, (u64 *)(at + pad));
	flowjit_output_done(handle, at, pad + id_len);
}

/*
 * Write one chunk, or (@delta) the image as a delta record; a full
 * buffer counts it as lost (PERF_RECORD_LOST), and no later delta may
 * build on what was in it.
 */
static void flowjit_output_chunk(struct perf_event *event,
				 const struct flowjit_output *out, u32 off,
				 bool delta)
{
	const struct flowjit_image *img = out->img;
	/* every byte read from these is written first */
	struct flowjit_output_head stage __uninitialized;
	struct perf_sample_data sample __uninitialized;
	struct perf_output_handle handle;
	struct perf_event_header header;
	struct flowjit_output_head *r;
	unsigned int i, id_len, head;
	u32 len, pad;

	len = delta ? img->delta_len : flowjit_chunk_len(img, off);
	pad = ALIGN(len, sizeof(u64)) - len;
	perf_sample_data_init(&sample, 0, 0);
	flowjit_header_init(&header, &sample, event, PERF_RECORD_FLOWJIT,
			    img->asid == FLOWJIT_ASID_KERNEL ?
			    PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
			    sizeof(r->header) + sizeof(r->rec) + len + pad);
	/* flowjit events have sample_id_all (flowjit_perf_event_open()) */
	id_len = event->attr.sample_id_all ? event->id_header_size : 0;

	if (perf_output_begin(&handle, &sample, event, header.size)) {
		atomic_inc(&flowjit_lost);
		return;
	}
	/* with no bytes, nothing comes between the record and its sample id */
	head = offsetof(struct flowjit_output_head, id) + (len ? 0 : id_len);
	r = flowjit_output_at(&handle, head, &stage);
	r->header = header;
	flowjit_record_init(&r->rec, img, out->csum, off);
	if (delta) {
		r->rec.op = FLOWJIT_OP_DELTA;
		r->rec.chunk_len = len;
		r->rec.base = img->base;
	}
	/*
	 * Every image is emitted by the task that made or ran its code, in
	 * its own context: its pid and tid as perf reports them to @event,
	 * in the pid namespace of the event perf_event_open() made (0 where
	 * the task is not visible there). The sample id has them already
	 * when it carries them.
	 */
	if (event->attr.sample_id_all &&
	    (event->attr.sample_type & PERF_SAMPLE_TID)) {
		r->rec.pid = sample.tid_entry.pid;
		r->rec.tid = sample.tid_entry.tid;
	} else {
		struct pid_namespace *ns = (event->parent ?: event)->ns;

		r->rec.pid = task_tgid_nr_ns(current, ns);
		r->rec.tid = task_pid_nr_ns(current, ns);
	}
	if (!len)
		perf_event__id_sample(event, &sample, r->id);
	flowjit_output_done(&handle, r, head);

	if (delta) {
		for (i = 0; i < img->npieces; i++) {
			perf_output_put(&handle, img->pieces[i]);
			perf_output_copy(&handle,
					 img->bytes + img->pieces[i].off,
					 img->pieces[i].len);
		}
	} else if (len) {
		perf_output_copy(&handle, img->bytes + off, len);
	}
	if (len)
		flowjit_output_tail(&handle, event, &sample, pad, id_len);
	perf_output_end(&handle);
}

/* perf_iterate_sideband() callback: all chunks of the image, in order */
static void flowjit_output_event(struct perf_event *event, void *data)
{
	const struct flowjit_output *out = data;
	u64 off = 0;

	if (!flowjit_event_wants(event, out->img))
		return;
	if (out->img->npieces && event->attr.flowjit_delta) {
		flowjit_output_chunk(event, out, 0, true);
		return;
	}
	do {
		flowjit_output_chunk(event, out, off, false);
		off += FLOWJIT_CHUNK_MAX;
	} while (off < out->img->len && out->img->op == FLOWJIT_OP_IMAGE);
}

/*
 * Report @img to every interested event: CPU-wide events of this CPU and
 * the events of the current task. Callable from any context perf output
 * is; the checksum is computed once, before the first event is written.
 */
void flowjit_emit(const struct flowjit_image *img)
{
	struct flowjit_output out = { .img = img };

	if (!READ_ONCE(sysctl_flowjit))
		return;
	if (WARN_ON_ONCE(img->op == FLOWJIT_OP_IMAGE && img->len > U32_MAX))
		return;
	if (img->op == FLOWJIT_OP_IMAGE)
		out.csum = img->has_csum ? img->csum :
			   flowjit_csum(img->bytes, img->len);
	perf_iterate_sideband(flowjit_output_event, &out);
}

static int __init flowjit_init(void)
{
	flowjit_crc_init();
	flowjit_register_sysctls(flowjit_sysctls,
				 ARRAY_SIZE(flowjit_sysctls) - 1);
	return 0;
}
late_initcall(flowjit_init);
