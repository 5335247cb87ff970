/* SPDX-License-Identifier: MIT */
/*
 * render_owners.c - who took each device's reserved memory from the driver
 * (docs/report.md OWNERS) in text, the summary and JSON; the HTML table is
 * in render_html.c's style here too, so one file says what an owner is.
 */
#include <inttypes.h>
#include <string.h>

#include "analysis/owners.h"
#include "render/html.h"
#include "render/render.h"
#include "render/render_owners.h"

#define TEXT_NAMED 4 /* owners named in the line that explains the difference */

const char *tlm__owner_what(const char *name)
{
	static const struct {
		const char *name, *what;
	} known[] = {
		{TLM_OWNER_PYTORCH, "PyTorch's caching allocator: segments"},
		{TLM_OWNER_CUBLAS, "cuBLAS/cuBLASLt: handles, workspaces"},
		{TLM_OWNER_CUDNN, "cuDNN: handles, workspaces"},
		{TLM_OWNER_NCCL, "NCCL: communicators' buffers"},
		{TLM_OWNER_POOLS, "the program's cudaMallocAsync (pools)"},
		{TLM_OWNER_PROGRAM, "the program's own CUDA calls"},
		{TLM_OWNER_UNKNOWN, "no stack, or no frame in a module listed"},
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcmp(name, known[i].name))
			return known[i].what;
	return "this library's own calls";
}

const struct tlm_report_device *tlm__owners_device(const struct tlm_report *r, int device, int kind)
{
	for (size_t i = 0; i < r->ndevices; i++)
		if (r->devices[i].device == device && r->devices[i].kind == kind)
			return &r->devices[i];
	return NULL;
}

static const struct tlm_report_owner *find(const struct tlm_report_device *d, const char *name)
{
	for (size_t i = 0; i < d->nowners; i++)
		if (!strcmp(d->owners[i].name, name))
			return &d->owners[i];
	return NULL;
}

static void dev_name(char *buf, size_t n, const struct tlm_report_device *d)
{
	if (d->device < 0)
		snprintf(buf, n, "host %s", tlm__mkind_name(d->kind));
	else
		snprintf(buf, n, "dev %d %s", d->device, tlm__mkind_name(d->kind));
}

/* "cublas, cudnn and 2 more": the owners other than PyTorch's allocator
 * holding bytes at the reserved peak. */
static void others(char *buf, size_t n, const struct tlm_report_device *d)
{
	size_t k = 0, shown = 0, len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < d->nowners; i++) {
		const struct tlm_report_owner *w = &d->owners[i];
		if (!strcmp(w->name, TLM_OWNER_PYTORCH) || !w->at_reserved_peak)
			continue;
		if (shown < TEXT_NAMED && len < n) {
			len += (size_t)snprintf(buf + len, n - len, "%s%s", shown ? ", " : "", w->name);
			shown++;
		}
		k++;
	}
	if (k > shown && len < n)
		snprintf(buf + len, n - len, " and %zu more", k - shown);
}

/* The difference between the device's peak reserved and PyTorch's own
 * max_memory_reserved(), in words: who took the rest. */
static void explain(FILE *f, const struct tlm_report_device *d)
{
	char a[32], b[32], c[32], names[200];
	const struct tlm_report_owner *pt = find(d, TLM_OWNER_PYTORCH);
	if (!pt)
		return;
	uint64_t rest = d->peak_reserved > pt->at_reserved_peak ? d->peak_reserved - pt->at_reserved_peak : 0;
	tlm__line(f, "  torch.cuda.max_memory_reserved() is pytorch's own peak, %s. At the device's reserved",
		  tlm__human(a, sizeof a, pt->peak));
	if (!rest) {
		tlm__line(f, "  peak, %s, PyTorch's allocator held all of it", tlm__human(b, sizeof b, d->peak_reserved));
		return;
	}
	others(names, sizeof names, d);
	tlm__line(f, "  peak, %s, %s of it was outside PyTorch's allocator, taken from the driver by",
		  tlm__human(b, sizeof b, d->peak_reserved), tlm__human(c, sizeof c, rest));
	tlm__line(f, "  %s (no PyTorch figure counts it; nvidia-smi does)", names);
}

void tlm__owners_text(FILE *f, const struct tlm_report *r)
{
	tlm__line(f, "%s", "");
	bool any = false, unknown = false;
	for (size_t i = 0; i < r->ndevices; i++)
		any |= r->devices[i].nowners > 0;
	if (!any) {
		tlm__line(f, "OWNERS: nothing was reserved");
		return;
	}
	tlm__line(f, "OWNERS: who took the reserved memory from the driver (each allocation's native stack)");
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		char dn[32], a[32], b[32], c[32], t[32];
		if (!d->nowners)
			continue;
		dev_name(dn, sizeof dn, d);
		tlm__line(f, "%-22s %12s %12s %12s", dn, "at the peak", "own peak", "at end");
		for (size_t k = 0; k < d->nowners; k++) {
			const struct tlm_report_owner *w = &d->owners[k];
			unknown |= !strcmp(w->name, TLM_OWNER_UNKNOWN);
			tlm__line(f, "  %-20.20s %12s %12s %12s  %s", w->name, tlm__human(a, sizeof a, w->at_reserved_peak),
				  tlm__human(b, sizeof b, w->peak), tlm__human(c, sizeof c, w->at_end),
				  tlm__owner_what(w->name));
		}
		tlm__line(f, "  %-20s %12s %12s %12s  the peak at %s", "= reserved", tlm__human(a, sizeof a, d->peak_reserved),
			  tlm__human(b, sizeof b, d->peak_reserved), tlm__human(c, sizeof c, d->reserved_at_end),
			  tlm__secs(t, sizeof t, d->peak_reserved_ns));
		explain(f, d);
	}
	if (unknown && tlm__native_stacks_off(r)) /* said, not guessed */
		tlm__line(f, "  unknown: no native stack (native stacks %s): not guessed", r->native_stacks);
	else if (unknown && !strcmp(r->native_stacks, "on"))
		tlm__line(f, "  unknown: none of its frames in a module listed: not guessed");
	else if (unknown) /* a trace that does not say (older tlm) */
		tlm__line(f, "  unknown: no native stack (TLM_STACK_DEPTH=0) or none of its frames in a module listed: "
			  "not guessed");
}

void tlm__owners_text_oom(FILE *f, const struct tlm_report *r, size_t i)
{
	const struct tlm_report_oom *o = &r->ooms[i];
	const struct tlm_report_device *d = tlm__owners_device(r, o->device, o->kind);
	if (!o->owner_bytes || !d)
		return;
	char line[512], a[32];
	size_t len = (size_t)snprintf(line, sizeof line, "      held then: %s reserved:", tlm__human(a, sizeof a, o->reserved));
	bool first = true;
	for (size_t k = 0; k < d->nowners && len < sizeof line; k++) {
		if (!o->owner_bytes[k])
			continue;
		len += (size_t)snprintf(line + len, sizeof line - len, "%s %s %s", first ? "" : ",", d->owners[k].name,
					tlm__human(a, sizeof a, o->owner_bytes[k]));
		first = false;
	}
	tlm__line(f, "%s", line);
}

int tlm__owners_summary(FILE *f, const struct tlm_report_device *d)
{
	size_t held = 0;
	for (size_t k = 0; k < d->nowners; k++)
		held += d->owners[k].at_reserved_peak > 0;
	if (d->kind != TLM_MEM_DEVICE || held < 2)
		return 0;
	char line[512], a[32];
	size_t len = (size_t)snprintf(line, sizeof line, "  owners at the reserved peak %s:",
				      tlm__human(a, sizeof a, d->peak_reserved));
	for (size_t k = 0, shown = 0; k < d->nowners && len < sizeof line; k++) {
		if (!d->owners[k].at_reserved_peak)
			continue;
		len += (size_t)snprintf(line + len, sizeof line - len, "%s %s %s", shown++ ? "," : "", d->owners[k].name,
					tlm__human(a, sizeof a, d->owners[k].at_reserved_peak));
	}
	tlm__line(f, "%s", line);
	return 1;
}

void tlm__owners_json(struct tlm__json *j, const struct tlm_report_device *d)
{
	tlm__json_key(j, "owners");
	tlm__json_arr(j);
	for (size_t k = 0; k < d->nowners; k++) {
		const struct tlm_report_owner *w = &d->owners[k];
		tlm__json_obj(j);
		tlm__json_key(j, "owner");
		tlm__json_str(j, w->name);
		tlm__json_ku(j, "peak_bytes", w->peak);
		tlm__json_ki(j, "peak_time_ns", w->peak_ns);
		tlm__json_ku(j, "bytes_at_reserved_peak", w->at_reserved_peak);
		tlm__json_ku(j, "live_bytes_at_end", w->at_end);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
}

void tlm__owners_json_oom(struct tlm__json *j, const struct tlm_report *r, const struct tlm_report_oom *o)
{
	const struct tlm_report_device *d = tlm__owners_device(r, o->device, o->kind);
	tlm__json_key(j, "owners");
	if (!o->owner_bytes || !d) {
		tlm__json_null(j);
		return;
	}
	tlm__json_arr(j);
	for (size_t k = 0; k < d->nowners; k++) {
		if (!o->owner_bytes[k])
			continue;
		tlm__json_obj(j);
		tlm__json_key(j, "owner");
		tlm__json_str(j, d->owners[k].name);
		tlm__json_ku(j, "bytes", o->owner_bytes[k]);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
}

void tlm__owners_html(FILE *f, const struct tlm_report *r)
{
	fputs("<h2 id=\"owners\">Owners of the reserved memory</h2>\n", f);
	bool any = false;
	for (size_t i = 0; i < r->ndevices; i++)
		any |= r->devices[i].nowners > 0;
	if (!any) {
		fputs("<p class=\"muted\">Nothing was reserved.</p>\n", f);
		return;
	}
	fputs("<table class=\"owners\">", f);
	tlm__html_th(f, "#dev|kind|owner|#at the reserved peak|#own peak|#at end|what");
	fputs("<tbody>\n", f);
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		for (size_t k = 0; k < d->nowners; k++) {
			const struct tlm_report_owner *w = &d->owners[k];
			fprintf(f, "<tr><td class=\"num\">%d</td><td>%s</td><td>", d->device, tlm__mkind_name(d->kind));
			tlm__html(f, w->name);
			fputs("</td>", f);
			tlm__html_bytes_cell(f, w->at_reserved_peak);
			tlm__html_bytes_cell(f, w->peak);
			tlm__html_bytes_cell(f, w->at_end);
			fputs("<td>", f);
			tlm__html(f, tlm__owner_what(w->name));
			fputs("</td></tr>\n", f);
		}
		if (!d->nowners)
			continue;
		fprintf(f, "<tr class=\"total\"><td class=\"num\">%d</td><td>%s</td><td>= reserved</td>", d->device,
			tlm__mkind_name(d->kind));
		tlm__html_bytes_cell(f, d->peak_reserved);
		tlm__html_bytes_cell(f, d->peak_reserved);
		tlm__html_bytes_cell(f, d->reserved_at_end);
		fputs("<td></td></tr>\n", f);
	}
	fputs("</tbody></table>\n<p class=\"muted\">Each driver allocation's owner is the first frame of its native "
	      "stack in a known library (PyTorch's caching allocator in libc10_cuda, cuBLAS, cuDNN, NCCL), else in "
	      "another library (by its file name), else the program's own call. <code>pytorch</code>'s own peak is "
	      "<code>torch.cuda.max_memory_reserved()</code>; what the others hold at the peak is memory PyTorch's "
	      "figures never show.</p>\n",
	      f);
}
