// SPDX-License-Identifier: GPL-2.0
/*
 * The sideband records flowjit builds on, as the base kernel emits them:
 * KSYMBOL and BPF_EVENT when a JIT'd BPF program comes and goes, and
 * TEXT_POKE when a static key is flipped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>

#include "harness.h"
#include "bpf_prog.h"
#include "sideband.h"

#define KERNEL_START	0xffff800000000000ULL

struct seen {
	uint64_t addr;		/* jited_ksyms[0] of the program */
	uint32_t len;		/* jited_prog_len */
	uint32_t prog_id;
	int ksym_reg, ksym_unreg, bpf_load, bpf_unload;
	int pokes, bad_pokes;
};

static int load_trivial_prog(const char *name)
{
	static const struct bpf_insn insns[] = BPF_PROG_TRIVIAL;

	return bpf_load_filter(insns, 2, name);
}

struct ksymbol_rec {
	struct perf_event_header header;
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;
	char name[];
};

struct bpf_event_rec {
	struct perf_event_header header;
	uint16_t type;
	uint16_t flags;
	uint32_t id;
	uint8_t tag[8];
};

struct text_poke_rec {
	struct perf_event_header header;
	uint64_t addr;
	uint16_t old_len;
	uint16_t new_len;
	uint8_t bytes[];
};

static void note_record(const struct perf_event_header *hdr,
			const struct flowjit_sample_id *id, void *arg)
{
	struct seen *s = arg;

	switch (hdr->type) {
	case PERF_RECORD_KSYMBOL: {
		const struct ksymbol_rec *k = (const void *)hdr;

		if (k->ksym_type != PERF_RECORD_KSYMBOL_TYPE_BPF ||
		    k->addr != s->addr)
			break;
		if (k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
			s->ksym_unreg++;
		else if (k->len == s->len && !strncmp(k->name, "bpf_prog_", 9))
			s->ksym_reg++;
		break;
	}
	case PERF_RECORD_BPF_EVENT: {
		const struct bpf_event_rec *b = (const void *)hdr;

		if (b->id != s->prog_id)
			break;
		if (b->type == PERF_BPF_EVENT_PROG_LOAD)
			s->bpf_load++;
		else if (b->type == PERF_BPF_EVENT_PROG_UNLOAD)
			s->bpf_unload++;
		break;
	}
	case PERF_RECORD_TEXT_POKE: {
		const struct text_poke_rec *t = (const void *)hdr;

		s->pokes++;
		if (t->addr < KERNEL_START || t->old_len != t->new_len ||
		    !memcmp(t->bytes, t->bytes + t->old_len, t->old_len))
			s->bad_pokes++;
		break;
	}
	}
}

/* drain until @done says so, for at most two seconds */
static void drain_until(struct sb *sb, struct seen *s,
			bool (*done)(const struct seen *s))
{
	int i;

	for (i = 0; i < 200 && !done(s); i++) {
		sb_drain(sb, note_record, s);
		if (!done(s))
			usleep(10000);
	}
}

static bool load_seen(const struct seen *s)
{
	return s->ksym_reg && s->bpf_load;
}

static bool unload_seen(const struct seen *s)
{
	return s->ksym_unreg && s->bpf_unload;
}

static bool pokes_seen(const struct seen *s)
{
	return s->pokes > 0;
}

FIXTURE(sideband) {
	struct sb sb;
	struct seen seen;
};

FIXTURE_SETUP(sideband)
{
	struct perf_event_attr attr;
	int err;

	memset(&self->seen, 0, sizeof(self->seen));
	sb_attr_init(&attr);
	attr.ksymbol = 1;
	attr.bpf_event = 1;
	attr.text_poke = 1;
	err = sb_open(&self->sb, &attr);
	if (err == -EACCES || err == -EPERM)
		SKIP(return, "CPU-wide perf events need privileges");
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(sideband)
{
	sb_close(&self->sb);
}

/* A JIT'd program's KSYMBOL has the address and length bpf(2) reports. */
TEST_F(sideband, bpf_load_and_unload_emit_ksymbol_and_bpf_event)
{
	static struct bpf_jit_info p;
	int fd;

	fd = load_trivial_prog("fj_sideband");
	if (fd == -EPERM || fd == -EACCES)
		SKIP(return, "BPF_PROG_LOAD needs privileges");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_jit_info_get(fd, &p));
	ASSERT_NE(0, p.info.jited_prog_len)
		TH_LOG("program not JIT'd: is bpf_jit_enable set?");
	self->seen.addr = p.ksyms[0];
	self->seen.len = p.info.jited_prog_len;
	self->seen.prog_id = p.info.id;

	drain_until(&self->sb, &self->seen, load_seen);
	EXPECT_EQ(1, self->seen.ksym_reg);
	EXPECT_EQ(1, self->seen.bpf_load);

	close(fd);
	drain_until(&self->sb, &self->seen, unload_seen);
	EXPECT_EQ(1, self->seen.ksym_unreg);
	EXPECT_EQ(1, self->seen.bpf_unload);
}

/* Flipping a static key patches its sites and emits TEXT_POKE records. */
TEST_F(sideband, static_key_flip_emits_text_poke)
{
	const char *knob = "/proc/sys/kernel/bpf_stats_enabled";

	if (access(knob, W_OK))
		SKIP(return, "%s not writable", knob);
	ASSERT_EQ(0, sb_write_file(knob, "1"));
	ASSERT_EQ(0, sb_write_file(knob, "0"));
	drain_until(&self->sb, &self->seen, pokes_seen);
	EXPECT_LT(0, self->seen.pokes);
	EXPECT_EQ(0, self->seen.bad_pokes);
}

FLOWJIT_HARNESS_MAIN
