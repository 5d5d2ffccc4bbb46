// SPDX-License-Identifier: GPL-2.0
/*
 * pr_print: ptxed-compatible output lines.
 */
#include "pr_print.h"

#include <inttypes.h>

const char *pr_print_exec_mode(enum pt_exec_mode mode)
{
	switch (mode) {
	case ptem_unknown:
		return "<unknown>";

	case ptem_16bit:
		return "16-bit";

	case ptem_32bit:
		return "32-bit";

	case ptem_64bit:
		return "64-bit";
	}

	return "<invalid>";
}

/* Print ", <name>: <addr>" if @flags ask for event IPs. */
static void pr_print_addr(FILE *out, uint32_t flags, const char *name,
			  uint64_t addr)
{
	if (flags & pr_print_event_ip)
		fprintf(out, ", %s: %016" PRIx64, name, addr);
}

/* Print ", ip: <ip>" if @flags ask for event IPs and @event has one. */
static void pr_print_event_ip_of(FILE *out, uint32_t flags,
				 const struct pt_event *event, uint64_t ip)
{
	if (!event->ip_suppressed)
		pr_print_addr(out, flags, "ip", ip);
}

/* Print the body of @event (between the brackets). */
static void pr_print_event_body(FILE *out, const struct pt_event *ev,
				uint32_t flags)
{
	switch (ev->type) {
	case ptev_enabled:
		fputs(ev->variant.enabled.resumed ? "resumed" : "enabled",
		      out);
		pr_print_addr(out, flags, "ip", ev->variant.enabled.ip);
		return;

	case ptev_disabled:
		fputs("disabled", out);
		pr_print_event_ip_of(out, flags, ev, ev->variant.disabled.ip);
		return;

	case ptev_async_disabled:
		fputs("disabled", out);
		pr_print_addr(out, flags, "at", ev->variant.async_disabled.at);
		if (flags & pr_print_event_ip)
			pr_print_event_ip_of(out, flags, ev,
					     ev->variant.async_disabled.ip);
		return;

	case ptev_async_branch:
		fputs("interrupt", out);
		pr_print_addr(out, flags, "from",
			      ev->variant.async_branch.from);
		if (!ev->ip_suppressed)
			pr_print_addr(out, flags, "to",
				      ev->variant.async_branch.to);
		return;

	case ptev_paging:
		fprintf(out, "paging, cr3: %016" PRIx64 "%s",
			ev->variant.paging.cr3,
			ev->variant.paging.non_root ? ", nr" : "");
		return;

	case ptev_async_paging:
		fprintf(out, "paging, cr3: %016" PRIx64 "%s",
			ev->variant.async_paging.cr3,
			ev->variant.async_paging.non_root ? ", nr" : "");
		pr_print_addr(out, flags, "ip", ev->variant.async_paging.ip);
		return;

	case ptev_overflow:
		fputs("overflow", out);
		pr_print_event_ip_of(out, flags, ev, ev->variant.overflow.ip);
		return;

	case ptev_exec_mode:
		fprintf(out, "exec mode: %s",
			pr_print_exec_mode(ev->variant.exec_mode.mode));
		pr_print_event_ip_of(out, flags, ev, ev->variant.exec_mode.ip);
		return;

	case ptev_tsx:
		if (ev->variant.tsx.aborted)
			fputs("aborted", out);
		else if (ev->variant.tsx.speculative)
			fputs("begin transaction", out);
		else
			fputs("committed", out);
		pr_print_event_ip_of(out, flags, ev, ev->variant.tsx.ip);
		return;

	case ptev_stop:
		fputs("stopped", out);
		return;

	case ptev_vmcs:
		fprintf(out, "vmcs, base: %016" PRIx64,
			ev->variant.vmcs.base);
		return;

	case ptev_async_vmcs:
		fprintf(out, "vmcs, base: %016" PRIx64,
			ev->variant.async_vmcs.base);
		pr_print_addr(out, flags, "ip", ev->variant.async_vmcs.ip);
		return;

	case ptev_exstop:
		fputs("exstop", out);
		pr_print_event_ip_of(out, flags, ev, ev->variant.exstop.ip);
		return;

	case ptev_mwait:
		fprintf(out, "mwait %" PRIx32 " %" PRIx32,
			ev->variant.mwait.hints, ev->variant.mwait.ext);
		pr_print_event_ip_of(out, flags, ev, ev->variant.mwait.ip);
		return;

	case ptev_pwre:
		fprintf(out, "pwre c%u.%u",
			(ev->variant.pwre.state + 1u) & 0xf,
			(ev->variant.pwre.sub_state + 1u) & 0xf);
		if (ev->variant.pwre.hw)
			fputs(" hw", out);
		return;

	case ptev_pwrx:
		fputs("pwrx ", out);
		if (ev->variant.pwrx.interrupt)
			fputs("int: ", out);
		if (ev->variant.pwrx.store)
			fputs("st: ", out);
		if (ev->variant.pwrx.autonomous)
			fputs("hw: ", out);
		fprintf(out, "c%u (c%u)",
			(ev->variant.pwrx.last + 1u) & 0xf,
			(ev->variant.pwrx.deepest + 1u) & 0xf);
		return;

	case ptev_ptwrite:
		fprintf(out, "ptwrite: %" PRIx64, ev->variant.ptwrite.payload);
		pr_print_event_ip_of(out, flags, ev, ev->variant.ptwrite.ip);
		return;

	case ptev_tick:
		fputs("tick", out);
		pr_print_event_ip_of(out, flags, ev, ev->variant.tick.ip);
		return;

	case ptev_cbr:
		fprintf(out, "cbr: %x", ev->variant.cbr.ratio);
		return;

	case ptev_mnt:
		fprintf(out, "mnt: %" PRIx64, ev->variant.mnt.payload);
		return;
	}

	fprintf(out, "unknown event %d", (int) ev->type);
}

int pr_print_event(FILE *out, const struct pt_event *event, uint32_t flags,
		   uint64_t offset)
{
	if (!out || !event)
		return -pte_invalid;

	fputc('[', out);

	if (flags & pr_print_offset)
		fprintf(out, "%016" PRIx64 "  ", offset);

	if ((flags & pr_print_event_time) && event->has_tsc)
		fprintf(out, "%016" PRIx64 "  ", event->tsc);

	pr_print_event_body(out, event, flags);
	fputs("]\n", out);

	return 0;
}

int pr_print_insn(FILE *out, uint64_t ip, int speculative, const char *text,
		  uint32_t flags, uint64_t offset, uint64_t time)
{
	if (!out)
		return -pte_invalid;

	if (flags & pr_print_offset)
		fprintf(out, "%016" PRIx64 "  ", offset);

	if (flags & pr_print_time)
		fprintf(out, "%016" PRIx64 "  ", time);

	if (speculative)
		fputs("? ", out);

	fprintf(out, "%016" PRIx64, ip);

	if (text)
		fprintf(out, "  %s", text);

	fputc('\n', out);
	return 0;
}

int pr_print_diag(FILE *out, int offset_status, uint64_t offset, uint64_t ip,
		  const char *kind, int errcode)
{
	if (!out || !kind)
		return -pte_invalid;

	if (offset_status < 0) {
		fprintf(out, "could not determine offset: %s\n",
			pt_errstr(pt_errcode(offset_status)));
		fprintf(out, "[?, %" PRIx64 ": %s: %s]\n", ip, kind,
			pt_errstr(pt_errcode(errcode)));
		return 0;
	}

	fprintf(out, "[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", offset, ip, kind,
		pt_errstr(pt_errcode(errcode)));
	return 0;
}
