/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libflowjit: the one reader of PERF_RECORD_FLOWJIT records for the host
 * tools, the selftests and the samples (include/uapi/linux/flowjit.h is
 * the format; Documentation/trace/flowjit.rst describes it).
 *
 * Plain C with no dependency beyond libc, so that static guest programs
 * can use it: build the .c files of this directory with the program, or
 * link libflowjit.a (make -C tools/lib/flowjit).
 *
 * The perf.data reader and writer of the same users is in this directory
 * too, apart from the flowjit parts: pdata.h (its contract), pdata.c,
 * built from $(LIBPDATA_SRCS) of libflowjit.mk.
 *
 * The contract:
 *
 * - flowjit_chunk_parse() validates ONE record body (what follows struct
 *   perf_event_header): its size, version, kind and op, and that its
 *   chunk lies in its object and in the record. Nothing else in the
 *   library reads a record's bytes.
 *
 * - Chunks of one image are the records that differ only in chunk_off and
 *   chunk_len (the kernel fills every other field from the same image,
 *   kernel/flowjit/core.c flowjit_record_init()). flowjit_rec_same_image()
 *   is that definition, and the reassembler uses nothing else.
 *
 * - flowjit_reasm reassembles [0, len) of an image from its chunks in any
 *   order and hands it out once every byte arrived exactly once and its
 *   CRC-32C holds. A head chunk (chunk_off 0) arriving for an image whose
 *   head is there already starts the image again, the earlier copy
 *   counted incomplete: a ring holds an image's chunks back to back, so
 *   that copy lost chunks. What it drops is counted in struct flowjit_counts:
 *   those counts, and nothing else, are what a health report of flowjit
 *   images needs. The pending set is bounded in objects and in bytes; to
 *   make room the oldest pending image is dropped (counted incomplete:
 *   its chunks are missing, since a ring holds an image's chunks back to
 *   back).
 *
 * - flowjit_crc32c() is the CRC-32C of the format, on the SSE4.2 crc32
 *   instruction where the CPU has it (chosen at run time) and table
 *   driven otherwise; both give the same values.
 *
 * - flowjit_store is the versioned image store of a decoder: what code
 *   was at (asid, ip) at time t. Its answers (see "The image store"
 *   below) are the one definition for every reader; its lookups do not
 *   modify it, so threads may share a store no longer added to.
 *
 * Functions return 0 or a positive count on success and a negative errno
 * value on failure unless they say otherwise; _fini() and _free() accept
 * NULL.
 */
#ifndef LIBFLOWJIT_H
#define LIBFLOWJIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The format: include/uapi/linux/flowjit.h, found through
 * $(LIBFLOWJIT_UAPI) outside the kernel tree and through the installed
 * headers (KHDR_INCLUDES) or tools/include/uapi inside it: never both, as
 * headers_install renames the include guard.
 */
#include <linux/flowjit.h>

/* struct perf_event_header.type of a flowjit record (PERF_RECORD_FLOWJIT) */
#define FLOWJIT_PERF_RECORD_TYPE	63

/*
 * The largest image reassembled, and the most bytes and objects pending
 * at once: a hostile len must not allocate gigabytes, and a lost chunk
 * must not keep its object pending for ever.
 */
#define FLOWJIT_IMAGE_MAX		(64u << 20)
#define FLOWJIT_PENDING_BYTES_MAX	(256u << 20)
#define FLOWJIT_PENDING_MAX		256

/*
 * CRC-32C (Castagnoli, reflected). flowjit_crc32c() updates @crc with
 * @len bytes at @buf, without initial value or final xor; flowjit_csum()
 * is rec.csum's checksum: ~flowjit_crc32c(~0, buf, len).
 */
uint32_t flowjit_crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t flowjit_csum(const void *buf, size_t len);

/* The two paths of flowjit_crc32c(), for tests and benchmarks. */
uint32_t flowjit_crc32c_table(uint32_t crc, const void *buf, size_t len);
/* Returns -EOPNOTSUPP in @crc's place if the CPU has no SSE4.2. */
int flowjit_crc32c_hw(uint32_t *crc, const void *buf, size_t len);
/* Returns true if flowjit_crc32c() uses the crc32 instruction. */
bool flowjit_crc32c_has_hw(void);

/* One checked record: its fixed part (host order) and the bytes it carries. */
struct flowjit_chunk {
	struct flowjit_record	rec;
	const uint8_t		*bytes;	/* rec.chunk_len bytes at the caller's */
};

/*
 * Check the record body @body of @size bytes (what follows the perf event
 * header; a sample_id trailer after it is allowed) and fill @chunk.
 *
 * Returns 0 for a valid record.
 * Returns -EOPNOTSUPP for a record version this library does not know: to
 * be skipped and counted, not an error of the file.
 * Returns -EINVAL for a truncated or inconsistent record, with a short
 * reason in @why if @why is not NULL.
 */
int flowjit_chunk_parse(struct flowjit_chunk *chunk, const void *body,
			size_t size, const char **why);

/* Returns true if @a and @b are chunks of the same image (see above). */
bool flowjit_rec_same_image(const struct flowjit_record *a,
			    const struct flowjit_record *b);

/* "bpf_prog", ..., "user_jit", or "unknown"; "IMAGE", "RETIRE", "DELTA" or "UNKNOWN" */
const char *flowjit_kind_name(unsigned int kind);
const char *flowjit_op_name(unsigned int op);

/* What happened to the records and images given to a reassembler. */
struct flowjit_counts {
	uint64_t records;	/* given to flowjit_reasm_parse() */
	uint64_t bad_records;	/* malformed (-EINVAL), dropped */
	uint64_t unknown_version; /* -EOPNOTSUPP, skipped */
	uint64_t complete;	/* images handed out, CRC-32C checked */
	uint64_t bad_csum;	/* all bytes arrived, CRC-32C mismatch */
	uint64_t overlap;	/* a chunk covered bytes twice */
	uint64_t incomplete;	/* chunks missing: flushed, evicted, head again */
	uint64_t too_large;	/* len above FLOWJIT_IMAGE_MAX */
};

/* A complete image. */
struct flowjit_image {
	struct flowjit_record	rec;	/* of its first chunk to arrive */
	uint8_t			*bytes;	/* rec.len bytes, free() them */
	uint64_t		time;	/* of its first chunk to arrive */
};

struct flowjit_pending;

/* The reassembler: embed it, flowjit_reasm_init() it. */
struct flowjit_reasm {
	struct flowjit_pending	*pending;
	size_t			nr_pending, cap;
	uint64_t		pending_bytes;
	uint64_t		seq;		/* of the next new object */
	struct flowjit_counts	counts;
};

void flowjit_reasm_init(struct flowjit_reasm *ra);
/* Free pending images without counting them. */
void flowjit_reasm_fini(struct flowjit_reasm *ra);

/*
 * flowjit_chunk_parse() @body, counting the record, and a malformed or
 * unknown one, in @ra's counts. Returns what flowjit_chunk_parse() does.
 */
int flowjit_reasm_parse(struct flowjit_reasm *ra, struct flowjit_chunk *chunk,
			const void *body, size_t size, const char **why);

/*
 * Add @chunk (op FLOWJIT_OP_IMAGE, from flowjit_chunk_parse()) seen at
 * @time.
 *
 * Returns 1 and fills @image when the image is complete and its CRC-32C
 * holds (@image->bytes is then the caller's).
 * Returns 0 when chunks are missing yet, or the image was dropped and
 * counted (bad checksum, overlap, too large).
 * Returns -EINVAL for a NULL argument or a chunk that is not an image's,
 * -ENOMEM when out of memory.
 */
int flowjit_reasm_add(struct flowjit_reasm *ra, const struct flowjit_chunk *chunk,
		      uint64_t time, struct flowjit_image *image);

/* Drop every pending image, counted incomplete: the end of the records. */
void flowjit_reasm_flush(struct flowjit_reasm *ra);

/*
 * The image store.
 *
 * Every image reassembled (all its bytes once, CRC-32C good) becomes a
 * *revision*: the bytes of [addr, addr + len) in address space asid from
 * its time on. A retire record hides what it covers from its time on.
 * Nothing is overwritten: the eBPF program that gets the address of an
 * unloaded one, or the next snapshot of a rewritten user JIT page, is one
 * more revision with a later time. So:
 *
 * - Records are added in any order of time, and the chunks of an image in
 *   any order. Each image and each retire record gets a seq, in the
 *   order they are added: (time, seq) orders the records, so of two
 *   records of equal time the one added later is the newer.
 *
 * - An image's time is the time given with the chunk that completes it
 *   (the kernel writes an image's chunks back to back, so it is also the
 *   time of its last record): a decoder must not run code before its
 *   last byte was written. flowjit_image.time, the time of its first
 *   chunk, is not used.
 *
 * - find(asid, ip, t): the revision covering ip that is newest by (time,
 *   seq) among those with time <= t, unless a retire record covering ip
 *   has a (time, seq) after that revision's and time <= t; then none. A
 *   retire record is point-based: retiring part of an image hides only
 *   the addresses it covers, the rest of the image stays live.
 *
 * - find_late(asid, ip, t): the first revision by (time, seq) covering ip
 *   with time > t, retired or not: for a decoder whose clock lags (its
 *   time is that of the last timing packet, older than the instructions
 *   that follow), code can only run after it was written.
 *
 * - lookup(asid, ip, t, late): find(), else with @late find_late(); and
 *   the addresses [lo, hi) around ip with the same answer, a revision or
 *   none. span() and read() serve bytes from it; read() goes on across
 *   revisions.
 *
 * - pid_asid(pid, t): the address space of process pid at t. An asid
 *   (not 0, the kernel's) with images of pid (not 0) is pid's from the
 *   earliest time of those images until the earliest retire record of
 *   the whole space (addr 0, len >= 0x7ffffffff000: exit, exec) of that
 *   pid added after one of its images. The answer is, of the asids begun
 *   at or before t and not ended at or before t, the one begun last (of
 *   equal times, the one whose first image was added last); else the
 *   one begun first after t.
 *
 * - A delta record (FLOWJIT_OP_DELTA) is a revision made of its base
 *   revision (same asid, addr, len and kind, revision number rec.base;
 *   zeros if rec.base is 0, which needs no other record)
 *   and the pieces it carries, of the delta's time, once the result's
 *   CRC-32C holds. Without the base in the store, nothing answers in its
 *   range from its time on (never the older bytes) until the base is
 *   added; then the revision is made, and flowjit_store_settled() hands
 *   it out. At most FLOWJIT_PENDING_MAX deltas wait (the oldest gives
 *   up); those that never get their base are counted delta_no_base, a
 *   result whose CRC-32C does not hold delta_bad (and csum_errors), its
 *   range hidden all the same.
 *
 * Dropped records are counted (struct flowjit_store_stats), never stored:
 * malformed or of an unknown version, images above FLOWJIT_STORE_MAX_LEN
 * (refused before reassembly; also counted too large), chunk errors (an
 * overlap or an image that lost chunks; also counted by image), bad
 * CRC-32C. An image that is empty or wraps around the
 * address space is no revision. Memory is linear in the records taken.
 */

/* Larger images are refused as bad records, not allocated. */
#define FLOWJIT_STORE_MAX_LEN	(64ULL << 20)

/* One revision: the bytes of [start, end) in asid from time on. */
struct flowjit_rev {
	uint64_t	asid;
	uint64_t	start;
	uint64_t	end;
	uint64_t	time;		/* of the chunk that completed the image */
	uint64_t	seq;		/* order among records of equal time */
	uint64_t	id;		/* the record's id, sub, revision, pid, */
	uint32_t	sub;		/* tid, kind and flags */
	uint32_t	revision;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	flags;
	uint8_t		kind;
	const uint8_t	*bytes;		/* end - start bytes, the store's */
};

struct flowjit_store_stats {
	uint64_t	records;	/* given to the store */
	uint64_t	images;		/* reassembled with a good CRC-32C */
	uint64_t	retires;	/* retire records */
	uint64_t	bad_records;	/* malformed or too large: dropped */
	uint64_t	unknown_version; /* skipped */
	uint64_t	chunk_errors;	/* overlaps; images missing chunks */
	uint64_t	csum_errors;	/* reassembled, CRC-32C wrong: dropped */
	uint64_t	pending;	/* images waiting for chunks now */
	uint64_t	revs;		/* revisions kept */
	uint64_t	retire_ranges;	/* retire records kept (len > 0) */
	uint64_t	too_large;	/* of bad_records: len above the maximum */
	uint64_t	overlaps;	/* images dropped: a byte came twice */
	uint64_t	incomplete;	/* images dropped: evicted, head again */
	uint64_t	faults;		/* user JIT images of exec faults */
	uint64_t	lost_windows;	/* flowjit_store_add_lost() calls kept */
	uint64_t	missing_revs;	/* user JIT revision numbers never seen */
	uint64_t	deltas;		/* delta records made revisions */
	uint64_t	delta_no_base;	/* deltas whose base never came: hidden */
	uint64_t	delta_bad;	/* of csum_errors: a delta's result */
	uint64_t	pinned;		/* images of pinned pages (FLOWJIT_F_PINNED) */
};

/* What span() and read() served: kept by the caller, one per thread. */
struct flowjit_store_reads {
	uint64_t	at_time;	/* from the revision live at the time */
	uint64_t	late;		/* from a later one (find_late()) */
};

struct flowjit_store;

/* Returns a new empty store, or NULL if out of memory. */
struct flowjit_store *flowjit_store_alloc(void);
/* Free @st and its revisions' bytes; accepts NULL. */
void flowjit_store_free(struct flowjit_store *st);

/*
 * Add the record body @body of @size bytes (as flowjit_chunk_parse()) of
 * time @time. A record refused by the parser is counted and dropped,
 * with the parser's reason in @why if @why is not NULL (else NULL).
 * If @added is not NULL it is set to the revision the record completed,
 * or NULL.
 *
 * Returns 0 when the record was taken, or counted and dropped.
 * Returns -ENOMEM when out of memory (the record is lost), -EINVAL for a
 * NULL @st or @body.
 */
int flowjit_store_add_record(struct flowjit_store *st, const void *body, size_t size,
			     uint64_t time, const struct flowjit_rev **added,
			     const char **why);

/* The same for a record its caller parsed (flowjit_chunk_parse()). */
int flowjit_store_add_chunk(struct flowjit_store *st, const struct flowjit_chunk *chunk,
			    uint64_t time, const struct flowjit_rev **added);

/*
 * Returns the next revision made since the last call of a delta that
 * waited for its base (added by another record), NULL when there is none
 * (then the queue starts again). Callers that keep something per
 * revision (@added above) take them after each add.
 */
const struct flowjit_rev *flowjit_store_settled(struct flowjit_store *st);

/*
 * Count a record flowjit_chunk_parse() refused with @err (-EOPNOTSUPP:
 * unknown version; else malformed), for callers that parse themselves.
 */
void flowjit_store_add_refused(struct flowjit_store *st, int err);

/* Fill @stats with @st's counts. */
void flowjit_store_stats(const struct flowjit_store *st, struct flowjit_store_stats *stats);

/*
 * Set *@asid to process @pid's address space at @time (see above).
 * Returns 0, -ENOENT if no image named @pid, -EINVAL for a NULL pointer.
 */
int flowjit_store_pid_asid(const struct flowjit_store *st, uint32_t pid, uint64_t time,
			   uint64_t *asid);

/* Returns the revision find() answers for (@asid, @ip, @time), or NULL. */
const struct flowjit_rev *flowjit_store_find(const struct flowjit_store *st, uint64_t asid,
					     uint64_t ip, uint64_t time);

/* Returns the revision find_late() answers, or NULL. */
const struct flowjit_rev *flowjit_store_find_late(const struct flowjit_store *st,
						  uint64_t asid, uint64_t ip, uint64_t time);

/*
 * Returns the revision live at @time covering @ip of @asid (find()),
 * else with @late the first later one (find_late()); NULL if none.
 * *@hi (if @hi is not NULL) is set to the end of the addresses from @ip
 * on with the same answer, at most the revision's end; *@lo (if @lo is
 * not NULL: it costs a walk of the revisions below @ip) to their start,
 * at least the revision's start. Without an answer they bound addresses
 * around @ip without one either, so that a caller can skip them: *@hi
 * the end of those from @ip on (UINT64_MAX if they go on to the end of
 * the address space: no revision covers its last address UINT64_MAX),
 * *@lo at least the last start of a revision at or below @ip.
 */
const struct flowjit_rev *flowjit_store_lookup(const struct flowjit_store *st, uint64_t asid,
					       uint64_t ip, uint64_t time, bool late,
					       uint64_t *lo, uint64_t *hi);

/*
 * The bytes at @ip that one lookup answers: sets *@bytes to them in the
 * store (valid until it is freed) and, if @rev is not NULL, *@rev to
 * their revision or NULL; counts the lookup in *@reads if @reads is not
 * NULL. Returns how many bytes there are, 0 if no revision answers.
 */
size_t flowjit_store_span(const struct flowjit_store *st, uint64_t asid, uint64_t ip,
			  uint64_t time, bool late, const uint8_t **bytes,
			  const struct flowjit_rev **rev, struct flowjit_store_reads *reads);

/*
 * Copy up to @len bytes at @ip to @buf, span by span (each counted in
 * *@reads if not NULL). Returns the number of contiguous bytes read from
 * @ip, 0 if no revision answers at @ip.
 */
size_t flowjit_store_read(const struct flowjit_store *st, uint64_t asid, uint64_t ip,
			  uint64_t time, bool late, uint8_t *buf, size_t len,
			  struct flowjit_store_reads *reads);

/*
 * Lost records.
 *
 * A user JIT page's revisions are numbered per address space, one after
 * the other (the kernel counts every image it writes of the space): a
 * number missing between two seen ones is an image lost, of some page of
 * that space, made between their times. A PERF_RECORD_LOST says records
 * of any address space were lost; its reader gives the store the window
 * they fall in (from the previous record of that ring buffer to the LOST
 * record). A revision is *suspect* at time t if an image that may have
 * replaced it was lost: a missing revision of its space, or a lost window,
 * after its time and before t. Its bytes may still be right (the lost
 * image may be another page's), but a decoder must not present them as
 * certain: it counts what it decoded from suspect revisions and says so.
 * An image of a pinned page (FLOWJIT_F_PINNED: the kernel or a device may
 * write it without a fault, so without a record) is suspect from its
 * time on.
 */

/*
 * Records were lost between @from and @to (perf times). Returns 0,
 * -EINVAL for a NULL @st or @from > @to, -ENOMEM.
 */
int flowjit_store_add_lost(struct flowjit_store *st, uint64_t from, uint64_t to);

/*
 * Returns true if an image newer than @rev may have been lost and made
 * before @time (see above); false for a NULL argument. @time is the
 * latest real time the read of @rev may be at: a decoder gives its clock
 * plus the clock's lag (MTC: ptreplay and perf), its lookup time when
 * nothing bounds the lag.
 */
bool flowjit_store_suspect(const struct flowjit_store *st, const struct flowjit_rev *rev,
			   uint64_t time);

/*
 * Revisions the clock cannot order.
 *
 * A decoder's clock lags the real time: by less than one MTC period when
 * no MTC was dropped; without MTC, up to the next TSC packet. A thread
 * that did not take the exec fault (another thread of its process did,
 * and the page is executable again) may run a page's new bytes while its
 * clock is still before the image's time. The trace then cannot say
 * which revision ran: where the two revisions' bytes differ, a decoder
 * that picks by the clock may decode the old ones. It must say so.
 *
 * Returns true if a revision newer than @rev, made up to @time (the
 * latest real time the read may be at), covers an address of [@lo, @hi)
 * within @rev with other bytes than @rev's there, whether it was
 * replaced or retired by @time or not; false if the bytes read from @rev
 * there are those of every revision up to @time, or for a NULL argument.
 */
bool flowjit_store_unordered(const struct flowjit_store *st, const struct flowjit_rev *rev,
			     uint64_t lo, uint64_t hi, uint64_t time);

/*
 * Revision switches tied to trace events.
 *
 * A decoder's clock is the time of the last timing packet: a lower bound
 * of the real time of the instructions that follow, behind by up to one
 * MTC period, or up to a PSB period with TSC packets only. find() at that
 * time can answer an older revision than the one that ran: a page
 * rewritten and run again between two timing packets.
 *
 * flowjit images a user JIT page at the exec fault of the thread that
 * runs the new bytes first (rec.tid; rec.id is the IP whose fetch
 * faulted, 0 in files of older kernels), and the trace of that thread
 * shows the fault: with user-only tracing FUP + TIP.PGD, then TIP.PGE at
 * the same IP when the kernel returns to it. The record was written
 * before that TIP.PGE, so from there on the thread's real time is at
 * least the record's: a *tie* raises the decoder's clock to it.
 *
 * struct flowjit_tie follows one trace (a thread's, or a CPU's with its
 * threads switching) and keeps that floor:
 *
 * - flowjit_tie_resume(tie, ip, t, t_max, n) at each place where tracing
 *   resumes (TIP.PGE; not at an OVF's FUP, where packets were lost)
 *   with the decoder's clock t and the latest real time it allows t_max
 *   (UINT64_MAX if it knows none). If the thread took a fault at ip
 *   since its last resume (after the floor and the clock then) that the
 *   clock has passed already (MTCs while the kernel took it), this
 *   TIP.PGE is that fault's: it is live by time, the floor moves to it
 *   and nothing is tied. Else the *next* fault image of the thread
 *   followed, the first by (time, seq) after the floor and after t, is
 *   tied if it was taken at ip (rec.id == ip) and its time is at most
 *   t_max. A resume at the IP of the thread's last one with no
 *   instruction decoded in between (an interrupt taken just before the
 *   faulting fetch, or just after the fault) changes nothing: what the
 *   last one decided stands, so the fault after it is not tied there.
 *   Images without the IP (rec.id 0) are never tied: tracing
 *   resumes inside a JIT page after every interrupt, system call and
 *   other fault there, so a page alone would tie too early; such files
 *   decode by time as before. Only the next one: an interrupt
 *   that stops the thread at an IP where it faults later must not pull
 *   the clock past faults in between. Several faults at one IP (an
 *   instruction crossing into the next page faults once per page) are
 *   tied one per TIP.PGE, in order. A fault whose TIP.PGE was lost (an
 *   OVF) blocks ties until the clock passes its time.
 *
 * - flowjit_tie_time(tie, t): the time to look code up at, max(t, floor).
 *
 * - flowjit_tie_how(tie, rev, t): why @rev answered at that time: by the
 *   clock (rev->time <= t), by a tie (<= floor), or late (find_late():
 *   code after the clock that no older revision covers).
 *
 * t_max is what makes a tie safe: with MTC (sent whenever TriggerEn is
 * set, also while the thread is in the kernel: Intel SDM Vol. 3C, "MTC
 * Packet", dependencies MTCEn && TriggerEn; at most 256 dropped in a row)
 * the clock at a TIP.PGE lags the real time by less than 257 MTC
 * periods, so clock + 257 periods bounds it (ptreplay and perf).
 * Without such a bound (TSC packets only) an interrupt at the entry
 * of a JIT function whose next fault is far ahead would tie that fault
 * early; only the rule "the next fault only" limits the damage then.
 * Even with it, an interrupt at the very IP of the thread's next fault,
 * before the page was written and within t_max of the fault, looks like
 * the fault (the trace cannot tell the two apart): the tie is made there
 * and the new bytes are used from the interrupt on. So a tie stays
 * *open* until the thread leaves user mode (TIP.PGD, flowjit_tie_leave())
 * with the clock past the fault's time, or a later resume is the TIP.PGE
 * of a fault the clock passed that came after it. Until then another
 * TIP.PGE at the fault's IP, with instructions decoded since the last
 * resume, could be the fault's as well: flowjit_tie_doubt() then says
 * once that what was decoded since the open ties were made (or since the
 * last doubt) from bytes read at flowjit_tie_time() that differ from those
 * at any open tie's flowjit_tie_alt() may not be what ran. So does the
 * thread leaving the trace (flowjit_tie_thread()) or the trace's end
 * (flowjit_tie_end()) with a tie open: its TIP.PGE may come later,
 * elsewhere. Several ties can be open at once (an interrupt at the IP
 * of each of the next faults); a wrong one makes the ties after it
 * wrong too. CYC packets narrow the clock's lag and make doubts rarer.
 * A fault whose bytes were those of the page's last image writes no
 * record (kernel/flowjit/user.c): its TIP.PGE ties nothing.
 */
enum flowjit_tie_how {
	FLOWJIT_TIE_NONE,	/* no revision */
	FLOWJIT_TIE_TIME,	/* live at the decoder's clock */
	FLOWJIT_TIE_EVENT,	/* live at the floor a fault event set */
	FLOWJIT_TIE_LATE,	/* after both: find_late() */
};

/* Open ties a trace keeps; beyond, the oldest is put in doubt. */
#define FLOWJIT_TIE_OPEN_MAX	8

/* An open tie: the fault tied and the floor before it. */
struct flowjit_tie_open {
	const struct flowjit_rev	*f;
	uint64_t			from;
};

struct flowjit_tie {
	const struct flowjit_store	*st;
	uint64_t			asid;	/* the thread followed */
	uint32_t			tid;
	bool				thread;	/* asid and tid are set */
	uint64_t			floor;	/* the last tied fault's time */
	uint64_t			floor_seq;
	const struct flowjit_rev	*last;	/* the last tied, or NULL */
	uint64_t			last_resume;	/* the clock then */
	uint64_t			last_ip;	/* where, after how many */
	uint64_t			last_insns;	/* instructions */
	bool				resumed;	/* the thread resumed before */
	uint64_t			resumes;	/* flowjit_tie_resume() calls */
	uint64_t			tied;		/* of them, faults tied */
	uint64_t			passed;	/* a fault's, the clock past it */
	/* an overflow lost packets: faults up to this time may be past */
	bool				ovf;
	uint64_t			ovf_max;
	uint64_t			overflows;	/* flowjit_tie_overflow() calls */
	/* ties until the clock passes their fault, oldest first */
	struct flowjit_tie_open		open[FLOWJIT_TIE_OPEN_MAX];
	unsigned int			nopen;
	uint64_t			left;		/* the clock at the last TIP.PGD */
	bool				have_left;	/* since the last resume */
	bool				doubt;		/* for flowjit_tie_doubt() */
	uint64_t			doubts;		/* ties found in doubt */
};

/* Follow a trace decoded with the images of @st. */
void flowjit_tie_init(struct flowjit_tie *tie, const struct flowjit_store *st);

/*
 * The thread the trace is of from now on: user address space @asid, @tid
 * (the same thread again changes nothing).
 */
void flowjit_tie_thread(struct flowjit_tie *tie, uint64_t asid, uint32_t tid);

/*
 * Tracing resumed at @ip with the decoder's clock at @time, the real time
 * at most @time_max, after the decoder decoded @insns instructions of
 * this trace in all (any count that grows with each instruction).
 * Returns the fault image tied (see above), or NULL.
 */
const struct flowjit_rev *flowjit_tie_resume(struct flowjit_tie *tie, uint64_t ip,
					     uint64_t time, uint64_t time_max, uint64_t insns);

/*
 * Tracing stopped (TIP.PGD: the thread entered the kernel) with the
 * decoder's clock at @time.
 */
void flowjit_tie_leave(struct flowjit_tie *tie, uint64_t time);

/*
 * The trace ended with the decoder's clock at @time.
 */
void flowjit_tie_end(struct flowjit_tie *tie, uint64_t time);

/*
 * Returns true, once, if an open tie was put in doubt by the last
 * flowjit_tie_resume(), flowjit_tie_thread() or flowjit_tie_end() (see
 * above).
 */
bool flowjit_tie_doubt(struct flowjit_tie *tie);

/*
 * Returns the time to look code up at for a decoder clock of @time if the
 * open tie @i (0: the oldest, up to tie->nopen) is wrong: the floor
 * before it, or @time if later.
 */
uint64_t flowjit_tie_alt(const struct flowjit_tie *tie, unsigned int i, uint64_t time);

/*
 * The trace overflowed (OVF): packets were lost up to where it resumes,
 * where the real time is at most @time_max (UINT64_MAX: unknown). A
 * fault of the followed thread with a time up to @time_max may have been
 * taken in the lost stretch, its TIP.PGE lost with it: until the clock
 * passes such a fault or a later TIP.PGE ties a fault, the revisions it
 * would replace are suspect (flowjit_tie_suspect()).
 */
void flowjit_tie_overflow(struct flowjit_tie *tie, uint64_t time_max);

/*
 * Returns true if @rev, read at the decoder clock @time, may already have
 * been replaced for the followed thread by a fault whose TIP.PGE an
 * overflow lost (see flowjit_tie_overflow()).
 */
bool flowjit_tie_suspect(const struct flowjit_tie *tie, const struct flowjit_rev *rev,
			 uint64_t time);

/* Returns the time to look code up at for a decoder clock of @time. */
uint64_t flowjit_tie_time(const struct flowjit_tie *tie, uint64_t time);

/*
 * Returns the time of the followed thread's first fault image after the
 * lookup time @time (flowjit_tie_time()), UINT64_MAX if there is none or
 * it cannot be known. The thread has not reached that fault in its trace:
 * a fault comes at the first fetch of the bytes it images and is tied at
 * its TIP.PGE, and the faults up to @time were tied or passed by the
 * clock. So what the thread runs now ran before that time, a bound on the
 * real time where the clock gives none (no MTC). Unknown: after an
 * overflow (a fault's TIP.PGE may be lost), or where the next fault has
 * no IP (older kernels: never tied, the thread may be past it).
 */
uint64_t flowjit_tie_next_fault(const struct flowjit_tie *tie, uint64_t time);

/* Returns why @rev is the answer at the decoder clock @time (see above). */
enum flowjit_tie_how flowjit_tie_how(const struct flowjit_tie *tie, const struct flowjit_rev *rev,
				     uint64_t time);

/* "none", "time", "event" or "late" */
const char *flowjit_tie_how_name(enum flowjit_tie_how how);

/*
 * Returns the first fault image of (@asid, @tid) after (@time, @seq), by
 * (time, seq), or NULL: the store's index of what ties look for.
 */
const struct flowjit_rev *flowjit_store_next_fault(const struct flowjit_store *st,
						   uint64_t asid, uint32_t tid,
						   uint64_t time, uint64_t seq);

#endif /* LIBFLOWJIT_H */
