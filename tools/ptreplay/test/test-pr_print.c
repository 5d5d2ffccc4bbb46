// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_print: ptxed-compatible output lines.
 */
#include "pr_print.h"
#include "pr_test.h"

#include <stdlib.h>

/* A fixture: an in-memory output stream and an event. */
struct print_fixture {
	FILE *out;
	char *text;
	size_t size;
	struct pt_event event;

	struct prt_result (*init)(struct print_fixture *);
	struct prt_result (*fini)(struct print_fixture *);
};

static struct prt_result pfx_init(struct print_fixture *fx)
{
	fx->text = NULL;
	fx->size = 0;
	fx->out = open_memstream(&fx->text, &fx->size);
	prt_ptr(fx->out);
	memset(&fx->event, 0, sizeof(fx->event));

	return prt_passed();
}

static struct prt_result pfx_fini(struct print_fixture *fx)
{
	if (fx->out)
		fclose(fx->out);
	free(fx->text);

	return prt_passed();
}

/* The text printed so far. */
static const char *pfx_text(struct print_fixture *fx)
{
	fflush(fx->out);
	return fx->text ? fx->text : "";
}

static struct prt_result print_null(struct print_fixture *fx)
{
	prt_int_eq(pr_print_event(NULL, &fx->event, 0, 0), -pte_invalid);
	prt_int_eq(pr_print_event(fx->out, NULL, 0, 0), -pte_invalid);
	prt_int_eq(pr_print_insn(NULL, 0, 0, NULL, 0, 0, 0), -pte_invalid);
	prt_int_eq(pr_print_diag(NULL, 0, 0, 0, "error", 0), -pte_invalid);
	prt_int_eq(pr_print_diag(fx->out, 0, 0, 0, NULL, 0), -pte_invalid);
	prt_str_eq(pfx_text(fx), "");

	return prt_passed();
}

/* Print @fx->event with @flags and expect @line. */
static struct prt_result event(struct print_fixture *fx, uint32_t flags,
			       const char *line)
{
	prt_int_eq(pr_print_event(fx->out, &fx->event, flags, 0), 0);
	prt_str_eq(pfx_text(fx), line);

	return prt_passed();
}

static struct prt_result enabled(struct print_fixture *fx, uint32_t flags,
				 const char *line)
{
	fx->event.type = ptev_enabled;
	fx->event.variant.enabled.ip = 0x1000;
	return event(fx, flags, line);
}

static struct prt_result resumed(struct print_fixture *fx)
{
	fx->event.type = ptev_enabled;
	fx->event.variant.enabled.resumed = 1;
	return event(fx, 0, "[resumed]\n");
}

static struct prt_result disabled_suppressed(struct print_fixture *fx)
{
	fx->event.type = ptev_disabled;
	fx->event.ip_suppressed = 1;
	return event(fx, pr_print_event_ip, "[disabled]\n");
}

static struct prt_result async_disabled(struct print_fixture *fx)
{
	fx->event.type = ptev_async_disabled;
	fx->event.variant.async_disabled.at = 0x1001;
	fx->event.variant.async_disabled.ip = 0x2000;
	return event(fx, pr_print_event_ip, "[disabled, at: 0000000000001001, "
		     "ip: 0000000000002000]\n");
}

static struct prt_result async_branch(struct print_fixture *fx)
{
	fx->event.type = ptev_async_branch;
	fx->event.variant.async_branch.from = 0x100000;
	fx->event.variant.async_branch.to = 0x100001;
	return event(fx, pr_print_event_ip, "[interrupt, from: "
		     "0000000000100000, to: 0000000000100001]\n");
}

static struct prt_result paging_nr(struct print_fixture *fx)
{
	fx->event.type = ptev_paging;
	fx->event.variant.paging.cr3 = 0xb00;
	fx->event.variant.paging.non_root = 1;
	return event(fx, 0, "[paging, cr3: 0000000000000b00, nr]\n");
}

static struct prt_result exec_mode(struct print_fixture *fx)
{
	fx->event.type = ptev_exec_mode;
	fx->event.variant.exec_mode.mode = ptem_32bit;
	fx->event.variant.exec_mode.ip = 0x100000;
	return event(fx, pr_print_event_ip,
		     "[exec mode: 32-bit, ip: 0000000000100000]\n");
}

static struct prt_result tsx(struct print_fixture *fx, int speculative,
			     int aborted, const char *line)
{
	fx->event.type = ptev_tsx;
	fx->event.variant.tsx.speculative = (uint32_t) speculative;
	fx->event.variant.tsx.aborted = (uint32_t) aborted;
	return event(fx, 0, line);
}

static struct prt_result pwre_hw(struct print_fixture *fx)
{
	fx->event.type = ptev_pwre;
	fx->event.variant.pwre.state = 0;
	fx->event.variant.pwre.sub_state = 0xf;
	fx->event.variant.pwre.hw = 1;
	return event(fx, 0, "[pwre c1.0 hw]\n");
}

static struct prt_result pwrx(struct print_fixture *fx)
{
	fx->event.type = ptev_pwrx;
	fx->event.variant.pwrx.interrupt = 1;
	fx->event.variant.pwrx.last = 0;
	fx->event.variant.pwrx.deepest = 0xf;
	return event(fx, 0, "[pwrx int: c1 (c0)]\n");
}

static struct prt_result mwait(struct print_fixture *fx)
{
	fx->event.type = ptev_mwait;
	fx->event.variant.mwait.hints = 0x5;
	fx->event.variant.mwait.ip = 0x1000;
	return event(fx, pr_print_event_ip,
		     "[mwait 5 0, ip: 0000000000001000]\n");
}

static struct prt_result ptwrite(struct print_fixture *fx)
{
	fx->event.type = ptev_ptwrite;
	fx->event.variant.ptwrite.payload = 0xabcd;
	return event(fx, 0, "[ptwrite: abcd]\n");
}

static struct prt_result tick_time(struct print_fixture *fx)
{
	fx->event.type = ptev_tick;
	fx->event.has_tsc = 1;
	fx->event.tsc = 0x1060;
	fx->event.ip_suppressed = 1;
	return event(fx, pr_print_event_time | pr_print_event_ip,
		     "[0000000000001060  tick]\n");
}

static struct prt_result time_without_tsc(struct print_fixture *fx)
{
	fx->event.type = ptev_stop;
	return event(fx, pr_print_event_time, "[stopped]\n");
}

static struct prt_result cbr_mnt(struct print_fixture *fx)
{
	fx->event.type = ptev_cbr;
	fx->event.variant.cbr.ratio = 0xf;
	prt_int_eq(pr_print_event(fx->out, &fx->event, 0, 0), 0);

	fx->event.type = ptev_mnt;
	fx->event.variant.mnt.payload = 0xa000;
	return event(fx, 0, "[cbr: f]\n[mnt: a000]\n");
}

static struct prt_result vmcs(struct print_fixture *fx)
{
	fx->event.type = ptev_async_vmcs;
	fx->event.variant.async_vmcs.base = 0xa000;
	fx->event.variant.async_vmcs.ip = 0x1000;
	return event(fx, 0, "[vmcs, base: 000000000000a000]\n");
}

static struct prt_result unknown_event(struct print_fixture *fx)
{
	fx->event.type = (enum pt_event_type) 99;
	return event(fx, 0, "[unknown event 99]\n");
}

static struct prt_result insn(struct print_fixture *fx)
{
	prt_int_eq(pr_print_insn(fx->out, 0x1002, 0, NULL, 0, 0, 0), 0);
	prt_int_eq(pr_print_insn(fx->out, 0x100000, 1, NULL, 0, 0, 0), 0);
	prt_int_eq(pr_print_insn(fx->out, 0x1000, 0, "nop", 0, 0, 0), 0);
	prt_str_eq(pfx_text(fx), "0000000000001002\n? 0000000000100000\n"
		   "0000000000001000  nop\n");

	return prt_passed();
}

static struct prt_result insn_offset_time(struct print_fixture *fx)
{
	prt_int_eq(pr_print_insn(fx->out, 0x1000, 0, NULL,
				 pr_print_offset | pr_print_time, 0x20, 0x30),
		   0);
	prt_str_eq(pfx_text(fx), "0000000000000020  0000000000000030  "
		   "0000000000001000\n");

	return prt_passed();
}

static struct prt_result diag(struct print_fixture *fx)
{
	prt_int_eq(pr_print_diag(fx->out, 0, 0x2b, 0x100004, "error",
				 -pte_nomap), 0);
	prt_str_eq(pfx_text(fx), "[2b, 100004: error: no memory mapped at "
		   "this address]\n");

	return prt_passed();
}

static struct prt_result diag_no_offset(struct print_fixture *fx)
{
	prt_int_eq(pr_print_diag(fx->out, -pte_nosync, 0, 0x10, "sync error",
				 -pte_eos), 0);
	prt_str_eq(pfx_text(fx), "could not determine offset: decoder out "
		   "of sync\n[?, 10: sync error: reached end of trace "
		   "stream]\n");

	return prt_passed();
}

static struct prt_result exec_mode_names(void)
{
	prt_str_eq(pr_print_exec_mode(ptem_unknown), "<unknown>");
	prt_str_eq(pr_print_exec_mode(ptem_16bit), "16-bit");
	prt_str_eq(pr_print_exec_mode(ptem_64bit), "64-bit");
	prt_str_eq(pr_print_exec_mode((enum pt_exec_mode) 7), "<invalid>");

	return prt_passed();
}

int main(void)
{
	struct print_fixture pfx = { .init = pfx_init, .fini = pfx_fini };
	struct prt_suite suite = { 0, 0 };

	prt_run_fx(suite, "pr_print: printing rejects NULL arguments",
		   print_null, pfx);
	prt_run_fx(suite, "pr_print: [enabled] without --event:ip", enabled,
		   pfx, 0, "[enabled]\n");
	prt_run_fx(suite, "pr_print: [enabled, ip: ...] with --event:ip",
		   enabled, pfx, pr_print_event_ip,
		   "[enabled, ip: 0000000000001000]\n");
	prt_run_fx(suite, "pr_print: a resumed enable prints [resumed]",
		   resumed, pfx);
	prt_run_fx(suite, "pr_print: a suppressed IP is never printed",
		   disabled_suppressed, pfx);
	prt_run_fx(suite, "pr_print: async disable prints at and ip",
		   async_disabled, pfx);
	prt_run_fx(suite, "pr_print: async branch prints [interrupt, from, to]",
		   async_branch, pfx);
	prt_run_fx(suite, "pr_print: non-root paging appends ', nr'",
		   paging_nr, pfx);
	prt_run_fx(suite, "pr_print: exec mode names the mode", exec_mode,
		   pfx);
	prt_run_fx(suite, "pr_print: tsx begin prints [begin transaction]",
		   tsx, pfx, 1, 0, "[begin transaction]\n");
	prt_run_fx(suite, "pr_print: tsx abort prints [aborted]", tsx, pfx,
		   1, 1, "[aborted]\n");
	prt_run_fx(suite, "pr_print: tsx commit prints [committed]", tsx, pfx,
		   0, 0, "[committed]\n");
	prt_run_fx(suite, "pr_print: pwre shows C-states plus one and hw",
		   pwre_hw, pfx);
	prt_run_fx(suite, "pr_print: pwrx shows the wake reason and states",
		   pwrx, pfx);
	prt_run_fx(suite, "pr_print: mwait prints hints and extensions in hex",
		   mwait, pfx);
	prt_run_fx(suite, "pr_print: ptwrite prints the payload in hex",
		   ptwrite, pfx);
	prt_run_fx(suite, "pr_print: --event:time prefixes the TSC",
		   tick_time, pfx);
	prt_run_fx(suite, "pr_print: --event:time skips events without TSC",
		   time_without_tsc, pfx);
	prt_run_fx(suite, "pr_print: cbr and mnt print their payloads in hex",
		   cbr_mnt, pfx);
	prt_run_fx(suite, "pr_print: async vmcs hides the IP without flag",
		   vmcs, pfx);
	prt_run_fx(suite, "pr_print: an unknown event type is named",
		   unknown_event, pfx);
	prt_run_fx(suite, "pr_print: instructions print as 16 hex digits",
		   insn, pfx);
	prt_run_fx(suite, "pr_print: --offset and --time prefix instructions",
		   insn_offset_time, pfx);
	prt_run_fx(suite, "pr_print: errors print as [offset, ip: kind: msg]",
		   diag, pfx);
	prt_run_fx(suite, "pr_print: an unknown offset prints as '?'",
		   diag_no_offset, pfx);
	prt_run(suite, "pr_print: execution modes have ptxed's names",
		exec_mode_names);

	return prt_exit(&suite);
}
