// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel text rewrites in the sideband: every path that changes
 * executable kernel text while a flowjit event is open is reported, by
 * PERF_RECORD_TEXT_POKE or by a PERF_RECORD_FLOWJIT record, and the
 * bytes a record carries are those that then execute: each test makes
 * the kernel patch its text, then reads the patched range back through
 * /proc/kcore and compares.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/elf.h>
#include <linux/if_link.h>

#include "harness.h"
#include "bpf_prog.h"
#include "flowjit_records.h"

#define TRACEFS		"/sys/kernel/tracing"
#define TEXT_MODULE	"/extra/flowjit_text_mod.ko"
#define MAX_POKES	4096
#define POKE_MAX_LEN	8192

/* a PERF_RECORD_TEXT_POKE: new_len bytes at addr (0: freed text) */
struct poke {
	uint64_t addr;
	uint64_t time;
	uint16_t old_len;
	uint16_t new_len;
	uint8_t *bytes;
};

struct text_log {
	struct fj_set set;
	struct poke poke[MAX_POKES];
	int nr_pokes;
	int kernel_flowjit;	/* flowjit records of kernel code */
};

static void text_note(const struct perf_event_header *hdr,
		      const struct flowjit_sample_id *id, void *arg)
{
	struct text_log *log = arg;
	const uint8_t *p = (const uint8_t *)(hdr + 1);
	struct poke *k;

	/*
	 * the asid field as the kernel wrote it, unparsed: a user-only event
	 * must get no record of kernel code, even one the parser would refuse
	 */
	if (hdr->type == PERF_RECORD_FLOWJIT) {
		const struct flowjit_record *rec = (const void *)p;

		if (rec->asid == FLOWJIT_ASID_KERNEL)
			log->kernel_flowjit++;
	}
	if (hdr->type != PERF_RECORD_TEXT_POKE) {
		fj_note(hdr, id, &log->set);
		return;
	}
	if (log->nr_pokes == MAX_POKES)
		return;
	k = &log->poke[log->nr_pokes++];
	memcpy(&k->addr, p, 8);
	memcpy(&k->old_len, p + 8, 2);
	memcpy(&k->new_len, p + 10, 2);
	k->time = id->time;
	k->bytes = malloc(k->new_len + k->old_len + 1);
	memcpy(k->bytes, p + 12 + k->old_len, k->new_len);
}

static void text_collect(struct sb *sb, struct text_log *log)
{
	int i;

	for (i = 0; i < sb->nr; i++) {
		struct sb one = { .nr = 1 };

		one.ring[0] = sb->ring[i];
		log->set.ring = i;
		sb_drain(&one, text_note, log);
		sb->ring[i].lost = one.ring[0].lost;
	}
}

static void text_reset(struct text_log *log)
{
	int i;

	for (i = 0; i < log->nr_pokes; i++)
		free(log->poke[i].bytes);
	log->nr_pokes = 0;
	log->kernel_flowjit = 0;
	fj_reset(&log->set);
}

/* read @len bytes of kernel memory at @addr through /proc/kcore */
static int kcore_read(uint64_t addr, void *buf, size_t len)
{
	static struct elf64_phdr *ph;
	static int fd = -1, nph;
	struct elf64_hdr eh;
	int i;

	if (fd < 0) {
		fd = open("/proc/kcore", O_RDONLY);
		if (fd < 0)
			return -errno;
		if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
			return -EIO;
		nph = eh.e_phnum;
		ph = calloc(nph, sizeof(*ph));
		if (!ph || pread(fd, ph, nph * sizeof(*ph), eh.e_phoff) !=
			   (ssize_t)(nph * sizeof(*ph)))
			return -EIO;
	}
	for (i = 0; i < nph; i++) {
		if (ph[i].p_type != PT_LOAD || addr < ph[i].p_vaddr ||
		    addr + len > ph[i].p_vaddr + ph[i].p_memsz)
			continue;
		if (pread(fd, buf, len, ph[i].p_offset + addr - ph[i].p_vaddr) !=
		    (ssize_t)len)
			return -EIO;
		return 0;
	}
	return -ENOENT;
}

/*
 * The patch site of the function or BPF program at @addr: its fentry
 * call or nop, after the ENDBR64 a kernel with IBT (CONFIG_X86_KERNEL_IBT)
 * begins it with, or the 4-byte nop the kernel seals an ENDBR64 no
 * indirect call needs with at boot (gen_endbr_poison()). ftrace, kprobes
 * on ftrace and BPF trampolines patch there.
 */
static uint64_t fentry_site(uint64_t addr)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t sealed[] = { 0x66, 0x0f, 0x1f, 0x00 };
	uint8_t b[sizeof(endbr64)];

	if (kcore_read(addr, b, sizeof(b)))
		return addr;
	if (!memcmp(b, endbr64, sizeof(b)) || !memcmp(b, sealed, sizeof(b)))
		return addr + sizeof(b);
	return addr;
}

/* one write of kernel text, from either record type */
struct text_write {
	uint64_t addr, len, time;
	const uint8_t *bytes;	/* NULL: the range was freed or retired */
	const char *what;
};

static int text_writes(struct text_log *log, struct text_write *w, int max)
{
	int i, n = 0;

	for (i = 0; i < log->nr_pokes && n < max; i++) {
		struct poke *k = &log->poke[i];

		w[n++] = (struct text_write) {
			.addr = k->addr,
			.len = k->new_len ? k->new_len : k->old_len,
			.time = k->time,
			.bytes = k->new_len ? k->bytes : NULL,
			.what = "PERF_RECORD_TEXT_POKE",
		};
	}
	for (i = 0; i < log->set.nr && n < max; i++) {
		struct fj_obj *o = &log->set.obj[i];

		if (o->rec.asid != FLOWJIT_ASID_KERNEL ||
		    o->rec.kind == FLOWJIT_KIND_BPF_PROG ||
		    o->rec.kind == FLOWJIT_KIND_BPF_SUBPROG)
			continue;
		if (o->rec.op == FLOWJIT_OP_IMAGE && !fj_complete(o))
			continue;
		w[n++] = (struct text_write) {
			.addr = o->rec.addr,
			.len = o->rec.len,
			.time = o->time,
			.bytes = o->rec.op == FLOWJIT_OP_IMAGE ? o->bytes : NULL,
			.what = "flowjit",
		};
	}
	return n;
}

/*
 * Every reported write that nothing later overwrote or freed must equal
 * what /proc/kcore shows now; returns how many were compared, and
 * counts the mismatches in *bad.
 */
static int check_against_kcore(struct text_log *log, int *bad)
{
	static struct text_write w[MAX_POKES + FJ_MAX_OBJS];
	int n = text_writes(log, w, MAX_POKES + FJ_MAX_OBJS);
	int i, j, checked = 0;
	uint8_t *now;

	*bad = 0;
	for (i = 0; i < n; i++) {
		bool superseded = false;

		if (!w[i].bytes)
			continue;
		for (j = 0; j < n && !superseded; j++)
			superseded = j != i && w[j].time > w[i].time &&
				     w[j].addr < w[i].addr + w[i].len &&
				     w[i].addr < w[j].addr + w[j].len;
		if (superseded)
			continue;
		now = malloc(w[i].len);
		if (!now || kcore_read(w[i].addr, now, w[i].len) ||
		    memcmp(now, w[i].bytes, w[i].len)) {
			fprintf(stderr, "# %s at %#llx (%llu bytes) != kcore\n",
				w[i].what, (unsigned long long)w[i].addr,
				(unsigned long long)w[i].len);
			(*bad)++;
		}
		free(now);
		checked++;
	}
	return checked;
}

/* the newest TEXT_POKE record that covers @addr, or NULL */
static struct poke *poke_at(struct text_log *log, uint64_t addr)
{
	struct poke *best = NULL;
	int i;

	for (i = 0; i < log->nr_pokes; i++) {
		struct poke *k = &log->poke[i];

		if (k->new_len && k->addr <= addr && addr < k->addr + k->new_len &&
		    (!best || k->time > best->time))
			best = k;
	}
	return best;
}

static int tracefs(const char *file, const char *s)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	return sb_write_file(path, s);
}

static bool tracefs_mounted(void)
{
	struct stat st;

	if (!stat(TRACEFS "/kprobe_events", &st))
		return true;
	mount("nodev", TRACEFS, "tracefs", 0, NULL);
	return !stat(TRACEFS "/kprobe_events", &st);
}

static uint64_t ksym_addr(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, name) && (type == 't' || type == 'T')) {
			found = addr;
			break;
		}
	fclose(f);
	return found;
}

static void settle(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static bool is_jmp(const uint8_t *b)
{
	return b[0] == 0xe9 || b[0] == 0xeb;
}

FIXTURE(kernel_text) {
	struct sb sb;
	struct text_log *log;
};

FIXTURE_SETUP(kernel_text)
{
	struct perf_event_attr attr;
	uint8_t probe;
	int err;

	self->log = calloc(1, sizeof(*self->log));
	ASSERT_NE(NULL, self->log);
	sb_attr_init(&attr);
	attr.flowjit = 1;
	attr.text_poke = 1;
	err = sb_open(&self->sb, &attr);
	if (err == -EACCES || err == -EPERM)
		SKIP(return, "CPU-wide flowjit events need privileges");
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, kcore_read(ksym_addr("kernel_clone"), &probe, 1))
		TH_LOG("/proc/kcore does not show kernel text");
}

FIXTURE_TEARDOWN(kernel_text)
{
	sb_close(&self->sb);
	text_reset(self->log);
	free(self->log);
}

/* records arrived, none lost, and each one equals the text now */
static void expect_all_match(struct __test_metadata *_metadata,
			     struct sb *sb, struct text_log *log)
{
	int bad, checked = check_against_kcore(log, &bad);

	EXPECT_EQ(0, fj_lost(sb));
	EXPECT_LT(0, checked);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, log->set.bad_version);
}

/*
 * A tracepoint's static key and static call: sites become jmp when the
 * event is enabled, and each is reported again, changed, when it is
 * disabled (jump labels back to nop; the static call trampoline may
 * jump elsewhere).
 */
TEST_F(kernel_text, tracepoint_static_key_sites_match_kcore)
{
	const char *ev = "events/sched/sched_process_fork/enable";
	struct text_log *log = self->log;
	int i, sites = 0, changed = 0, nops = 0;
	uint64_t site[64];
	uint8_t was[64][5];

	ASSERT_TRUE(tracefs_mounted());
	ASSERT_EQ(0, tracefs(ev, "1"));
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);
	for (i = 0; i < log->nr_pokes && sites < 64; i++) {
		struct poke *k = &log->poke[i];

		if (k->new_len < 2 || !is_jmp(k->bytes))
			continue;
		site[sites] = k->addr;
		memset(was[sites], 0, 5);
		memcpy(was[sites], k->bytes, k->new_len < 5 ? k->new_len : 5);
		sites++;
	}
	EXPECT_LT(0, sites) TH_LOG("no static key site became a jmp");
	text_reset(log);

	ASSERT_EQ(0, tracefs(ev, "0"));
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);
	for (i = 0; i < sites; i++) {
		struct poke *k = poke_at(log, site[i]);

		if (!k || k->addr != site[i] ||
		    !memcmp(k->bytes, was[i], k->new_len < 5 ? k->new_len : 5))
			continue;
		changed++;
		if (!is_jmp(k->bytes))
			nops++;
	}
	EXPECT_EQ(sites, changed) TH_LOG("sites not reported back");
	EXPECT_LT(0, nops) TH_LOG("no site reported back to a nop");
}

/* A kprobe registered through tracefs: int3 (or optprobe jmp) and back. */
TEST_F(kernel_text, kprobe_event_matches_kcore)
{
	struct text_log *log = self->log;
	uint64_t func = ksym_addr("kernel_clone");
	struct poke *k;
	char def[128];
	uint8_t now;
	int off, err = -1;

	ASSERT_TRUE(tracefs_mounted());
	ASSERT_NE(0, func);
	tracefs("kprobe_events", "");
	/* the fentry site goes through ftrace: find the next instruction */
	for (off = fentry_site(func) - func + 1; off < 32 && err; off++) {
		snprintf(def, sizeof(def), "p:fjtext/fjkp kernel_clone+%d", off);
		err = tracefs("kprobe_events", def);
	}
	ASSERT_EQ(0, err);
	off--;
	ASSERT_EQ(0, tracefs("events/fjtext/fjkp/enable", "1"));
	settle(300);		/* let the optimizer turn int3 into a jmp */
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);
	k = poke_at(log, func + off);
	ASSERT_NE(NULL, k) TH_LOG("no TEXT_POKE at kernel_clone+%d", off);
	now = k->bytes[func + off - k->addr];
	EXPECT_TRUE(now == 0xcc || now == 0xe9) TH_LOG("probe byte %#x", now);
	text_reset(log);

	ASSERT_EQ(0, tracefs("events/fjtext/fjkp/enable", "0"));
	ASSERT_EQ(0, tracefs("kprobe_events", ""));
	settle(300);
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);
	k = poke_at(log, func + off);
	ASSERT_NE(NULL, k) TH_LOG("probe removal not reported");
	now = k->bytes[func + off - k->addr];
	EXPECT_TRUE(now != 0xcc && now != 0xe9) TH_LOG("probe byte %#x", now);
}

/* The function tracer on one function: its fentry nop becomes a call. */
TEST_F(kernel_text, function_tracer_one_function_matches_kcore)
{
	struct text_log *log = self->log;
	uint64_t func = ksym_addr("kernel_clone");
	struct poke *k;

	ASSERT_TRUE(tracefs_mounted());
	ASSERT_NE(0, func);
	func = fentry_site(func);
	ASSERT_EQ(0, tracefs("set_ftrace_filter", "kernel_clone"));
	ASSERT_EQ(0, tracefs("current_tracer", "function"));
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);
	k = poke_at(log, func);
	ASSERT_NE(NULL, k) TH_LOG("no TEXT_POKE at kernel_clone");
	EXPECT_EQ(0xe8, k->bytes[func - k->addr]);
	text_reset(log);

	ASSERT_EQ(0, tracefs("current_tracer", "nop"));
	tracefs("set_ftrace_filter", "");
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);
	k = poke_at(log, func);
	ASSERT_NE(NULL, k) TH_LOG("call site restore not reported");
	EXPECT_NE(0xe8, k->bytes[func - k->addr]);
}

static int load_prog(int type, int attach, int target, uint32_t btf_id,
		     int btf_fd, const void *func_info)
{
	static const struct bpf_insn insns[] = BPF_PROG_TRIVIAL;
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = type;
	attr.expected_attach_type = attach;
	attr.insns = (uint64_t)(unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (uint64_t)(unsigned long)"GPL";
	attr.attach_prog_fd = target;
	attr.attach_btf_id = btf_id;
	if (func_info) {
		attr.prog_btf_fd = btf_fd;
		attr.func_info = (uint64_t)(unsigned long)func_info;
		attr.func_info_rec_size = sizeof(struct bpf_func_info);
		attr.func_info_cnt = 1;
	}
	snprintf(attr.prog_name, sizeof(attr.prog_name), "fj_text");
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	return fd < 0 ? -errno : fd;
}

static uint64_t prog_addr(int fd)
{
	struct bpf_jit_info *p = malloc(sizeof(*p));
	uint64_t addr = 0;

	if (p && !bpf_jit_info_get(fd, p) && p->info.nr_jited_ksyms)
		addr = p->ksyms[0];
	free(p);
	return addr;
}

static struct fj_obj *find_kind(struct text_log *log, uint8_t kind,
				uint8_t op, uint64_t addr)
{
	int i;

	for (i = 0; i < log->set.nr; i++) {
		struct fj_obj *o = &log->set.obj[i];

		if (o->rec.kind == kind && o->rec.op == op &&
		    o->rec.asid == FLOWJIT_ASID_KERNEL &&
		    (!addr || o->rec.addr == addr))
			return o;
	}
	return NULL;
}

/* the destination of a 5 byte call or jmp at @addr */
static uint64_t rel32_dest(uint64_t addr, const uint8_t *insn)
{
	int32_t rel;

	memcpy(&rel, insn + 1, 4);
	return addr + 5 + rel;
}

/* kernel records of @kind and @op that overlap [@addr, @addr + @len) */
static int count_over(struct text_log *log, uint8_t kind, uint8_t op,
		      uint64_t addr, uint64_t len)
{
	int i, n = 0;

	for (i = 0; i < log->set.nr; i++) {
		struct fj_obj *o = &log->set.obj[i];

		if (o->rec.kind == kind && o->rec.op == op &&
		    o->rec.asid == FLOWJIT_ASID_KERNEL &&
		    o->rec.addr < addr + len && addr < o->rec.addr + o->rec.len)
			n++;
	}
	return n;
}

/*
 * A BPF program's image is recorded once, as the program's: not also as
 * the text record of its copy into the bpf_prog_pack, nor of the int3
 * that fills its space once it is freed (its retire record says that).
 */
TEST_F(kernel_text, bpf_image_recorded_once_as_the_program)
{
	struct text_log *log = self->log;
	struct fj_obj *img;
	uint64_t addr, len;
	uint8_t *now;
	int prog, i;

	prog = load_prog(BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, 0, 0, NULL);
	ASSERT_LE(0, prog);
	addr = prog_addr(prog);
	ASSERT_NE(0, addr);
	text_collect(&self->sb, log);
	img = find_kind(log, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE, addr);
	ASSERT_NE(NULL, img) TH_LOG("no image record of the program");
	len = img->rec.len;
	EXPECT_EQ(1, count_over(log, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_IMAGE,
				addr, len));
	EXPECT_EQ(0, count_over(log, FLOWJIT_KIND_TEXT_POKE, FLOWJIT_OP_IMAGE,
				addr, len))
		TH_LOG("the copy into the pack was recorded too");
	now = malloc(len);
	ASSERT_NE(NULL, now);
	ASSERT_TRUE(fj_complete(img));
	EXPECT_EQ(0, kcore_read(addr, now, len));
	EXPECT_EQ(0, memcmp(now, img->bytes, len))
		TH_LOG("the image record differs from the text");
	free(now);
	EXPECT_EQ(0, fj_lost(&self->sb));
	text_reset(log);

	/* freed from an RCU callback or a workqueue: wait for the retire */
	close(prog);
	for (i = 0; i < 50; i++) {
		text_collect(&self->sb, log);
		if (find_kind(log, FLOWJIT_KIND_BPF_PROG, FLOWJIT_OP_RETIRE,
			      addr))
			break;
		settle(20);
	}
	EXPECT_NE(NULL, find_kind(log, FLOWJIT_KIND_BPF_PROG,
				  FLOWJIT_OP_RETIRE, addr));
	/* the pack space is freed after the retire record, by a worker */
	settle(500);
	text_collect(&self->sb, log);
	EXPECT_EQ(0, count_over(log, FLOWJIT_KIND_TEXT_POKE, FLOWJIT_OP_IMAGE,
				addr, len))
		TH_LOG("the int3 over the freed image was recorded");
	EXPECT_EQ(0, fj_lost(&self->sb));
}

/* The XDP dispatcher: its image (a text record) names the program. */
TEST_F(kernel_text, xdp_dispatcher_image_matches_kcore)
{
	struct text_log *log = self->log;
	union bpf_attr attr;
	int prog, link, i, named = 0, into = 0;
	uint32_t low;
	uint64_t addr;

	prog = load_prog(BPF_PROG_TYPE_XDP, BPF_XDP, 0, 0, 0, NULL);
	ASSERT_LE(0, prog);
	addr = prog_addr(prog);
	ASSERT_NE(0, addr);
	low = (uint32_t)addr;
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog;
	attr.link_create.target_ifindex = 1;	/* lo */
	attr.link_create.attach_type = BPF_XDP;
	attr.link_create.flags = XDP_FLAGS_SKB_MODE;
	link = sys_bpf(BPF_LINK_CREATE, &attr);
	ASSERT_LE(0, link) TH_LOG("XDP link on lo: %s", strerror(errno));
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);

	/* the dispatcher compares the program address (imm32) */
	for (i = 0; i < log->set.nr; i++) {
		struct fj_obj *o = &log->set.obj[i];
		uint64_t b;

		if (o->rec.kind != FLOWJIT_KIND_TEXT_POKE ||
		    o->rec.op != FLOWJIT_OP_IMAGE || !fj_complete(o))
			continue;
		for (b = 0; b + 4 <= o->rec.len; b++)
			if (!memcmp(o->bytes + b, &low, 4)) {
				named++;
				break;
			}
		/* the static call now jumps into this image */
		for (b = 0; b < (uint64_t)log->nr_pokes; b++) {
			struct poke *k = &log->poke[b];
			uint64_t dest;

			if (k->new_len != 5 ||
			    (k->bytes[0] != 0xe8 && k->bytes[0] != 0xe9))
				continue;
			dest = rel32_dest(k->addr, k->bytes);
			if (dest >= o->rec.addr && dest < o->rec.addr + o->rec.len)
				into++;
		}
	}
	EXPECT_LT(0, named) TH_LOG("no dispatcher image names the program");
	EXPECT_LT(0, into) TH_LOG("no TEXT_POKE jumps into the dispatcher");
	text_reset(log);

	close(link);
	close(prog);
	text_collect(&self->sb, log);
	EXPECT_LT(0, log->nr_pokes) TH_LOG("detach not reported");
	expect_all_match(_metadata, &self->sb, log);
}

/*
 * BTF of "static int fj_target(void)": fentry on a BPF program needs
 * the target's BTF only, not the kernel's (no CONFIG_DEBUG_INFO_BTF).
 */
static int load_target_btf(void)
{
	static const char strs[] = "\0int\0fj_target";
	struct {
		struct btf_header hdr;
		uint32_t types[10];
		char strs[sizeof(strs)];
	} b = {
		.hdr = {
			.magic = BTF_MAGIC, .version = BTF_VERSION,
			.hdr_len = sizeof(struct btf_header),
			.type_off = 0, .type_len = sizeof(b.types),
			.str_off = sizeof(b.types), .str_len = sizeof(strs),
		},
		.types = {
			/* [1] int */
			1, BTF_KIND_INT << 24, 4, (BTF_INT_SIGNED << 24) | 32,
			/* [2] int (void) */
			0, BTF_KIND_FUNC_PROTO << 24, 1,
			/* [3] static fj_target */
			5, BTF_KIND_FUNC << 24, 2,
		},
	};
	union bpf_attr attr;
	int fd;

	memcpy(b.strs, strs, sizeof(strs));
	memset(&attr, 0, sizeof(attr));
	attr.btf = (uint64_t)(unsigned long)&b;
	attr.btf_size = offsetof(typeof(b), strs) + sizeof(strs);
	fd = sys_bpf(BPF_BTF_LOAD, &attr);
	return fd < 0 ? -errno : fd;
}

/* fentry on a BPF program: the trampoline image, the call into it. */
TEST_F(kernel_text, bpf_trampoline_matches_kcore_and_retires)
{
	static const struct bpf_func_info fi = { .insn_off = 0, .type_id = 3 };
	struct text_log *log = self->log;
	int btf, target, fentry, link, tries;
	struct fj_obj *tr = NULL;
	uint64_t taddr, traddr;
	union bpf_attr attr;
	struct poke *k;

	btf = load_target_btf();
	ASSERT_LE(0, btf) TH_LOG("BTF_LOAD: %s", strerror(-btf));
	target = load_prog(BPF_PROG_TYPE_SOCKET_FILTER, 0, 0, 0, btf, &fi);
	ASSERT_LE(0, target) TH_LOG("target: %s", strerror(-target));
	taddr = fentry_site(prog_addr(target));
	fentry = load_prog(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, target, 3,
			   0, NULL);
	ASSERT_LE(0, fentry) TH_LOG("fentry: %s", strerror(-fentry));
	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.prog_fd = fentry;
	link = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr);
	ASSERT_LE(0, link) TH_LOG("attach: %s", strerror(errno));
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);

	tr = find_kind(log, FLOWJIT_KIND_BPF_TRAMPOLINE, FLOWJIT_OP_IMAGE, 0);
	ASSERT_NE(NULL, tr) TH_LOG("no trampoline image");
	EXPECT_TRUE(fj_complete(tr));
	traddr = tr->rec.addr;
	k = poke_at(log, taddr);
	ASSERT_NE(NULL, k) TH_LOG("no TEXT_POKE at the target program");
	EXPECT_EQ(0xe8, k->bytes[taddr - k->addr]);
	EXPECT_EQ(traddr, rel32_dest(taddr, k->bytes + (taddr - k->addr)));
	text_reset(log);

	close(link);
	close(fentry);
	close(target);
	close(btf);
	/* freed after an RCU tasks grace period, from a workqueue */
	for (tries = 0; tries < 100; tries++) {
		text_collect(&self->sb, log);
		if (find_kind(log, FLOWJIT_KIND_BPF_TRAMPOLINE,
			      FLOWJIT_OP_RETIRE, traddr))
			break;
		settle(50);
	}
	EXPECT_NE(NULL, find_kind(log, FLOWJIT_KIND_BPF_TRAMPOLINE,
				  FLOWJIT_OP_RETIRE, traddr));
}

/*
 * A module's text as it is when it goes live: its init function enabled
 * a static key with a site in the core text, so the coming and the live
 * images differ exactly where TEXT_POKE records say, and the live image
 * is what /proc/kcore shows. Unloading retires it. An event that
 * excludes the kernel gets none of it.
 */
TEST_F(kernel_text, module_text_live_image_matches_kcore)
{
	struct text_log *log = self->log, *ulog;
	struct fj_obj *coming, *live, *init, *ret;
	struct perf_event_attr attr;
	uint64_t b, diff = 0, explained = 0;
	struct sb usb;
	int fd, i;

	fd = open(TEXT_MODULE, O_RDONLY);
	ASSERT_LE(0, fd) TH_LOG(TEXT_MODULE ": %s", strerror(errno));
	ulog = calloc(1, sizeof(*ulog));
	ASSERT_NE(NULL, ulog);
	sb_attr_init(&attr);
	attr.flowjit = 1;
	attr.exclude_kernel = 1;
	ASSERT_EQ(0, sb_open(&usb, &attr));

	ASSERT_EQ(0, syscall(__NR_finit_module, fd, "", 0))
		TH_LOG("finit_module: %s", strerror(errno));
	close(fd);
	text_collect(&self->sb, log);
	expect_all_match(_metadata, &self->sb, log);

	coming = NULL;
	live = NULL;
	init = NULL;
	for (i = 0; i < log->set.nr; i++) {
		struct fj_obj *o = &log->set.obj[i];

		if (o->rec.kind != FLOWJIT_KIND_MODULE_TEXT)
			continue;
		if (o->rec.op == FLOWJIT_OP_IMAGE && o->rec.sub == 0)
			*(o->rec.revision == 1 ? &coming : &live) = o;
		if (o->rec.op == FLOWJIT_OP_RETIRE && o->rec.sub == 1)
			init = o;
	}
	ASSERT_NE(NULL, coming);
	ASSERT_NE(NULL, live);
	EXPECT_NE(NULL, init) TH_LOG("init text not retired");
	ASSERT_TRUE(fj_complete(coming));
	ASSERT_TRUE(fj_complete(live));
	ASSERT_EQ(coming->rec.addr, live->rec.addr);
	ASSERT_EQ(coming->rec.len, live->rec.len);
	EXPECT_LT(coming->time, live->time);
	for (b = 0; b < live->rec.len; b++) {
		struct poke *k;

		if (coming->bytes[b] == live->bytes[b])
			continue;
		diff++;
		k = poke_at(log, live->rec.addr + b);
		if (k && k->time > coming->time && k->time < live->time &&
		    k->bytes[live->rec.addr + b - k->addr] == live->bytes[b])
			explained++;
	}
	EXPECT_LT(0, diff) TH_LOG("the init function patched nothing?");
	EXPECT_EQ(diff, explained);
	b = live->rec.addr;
	i = live->rec.len;
	text_reset(log);

	ASSERT_EQ(0, syscall(__NR_delete_module, "flowjit_text_mod", O_NONBLOCK))
		TH_LOG("delete_module: %s", strerror(errno));
	text_collect(&self->sb, log);
	ret = find_kind(log, FLOWJIT_KIND_MODULE_TEXT, FLOWJIT_OP_RETIRE, b);
	ASSERT_NE(NULL, ret) TH_LOG("module text not retired");
	EXPECT_EQ(i, ret->rec.len);

	text_collect(&usb, ulog);
	EXPECT_EQ(0, ulog->kernel_flowjit);
	sb_close(&usb);
	text_reset(ulog);
	free(ulog);
}

FLOWJIT_HARNESS_MAIN
