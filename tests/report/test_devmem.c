/* SPDX-License-Identifier: MIT */
/*
 * test_devmem.c - the device's own view (DEVMEM/DEVPROCS records) reconciled
 * with the tracked memory, on synthetic traces whose truth is known by
 * construction: this process (pid 4242) holds a CUDA context of 8 MiB that
 * no API shows, another process may hold memory, NVML may be there or not,
 * list this pid or only host pids (a container), and say or not say each
 * process's bytes. Checked in the model, the OOM diagnosis line, the text,
 * the summary, the JSON and the HTML; a trace without samples prints none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/devmem.h"
#include "encoders/json_in.h"
#include "render/export.h"
#include "rt.h"

#define MS RT_MS
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define DEV 0x700000000000ull
#define PID 4242u

static uint64_t last_time, procs_lag; /* DEVPROCS: asked procs_lag after the last sample */

static void sample(struct rt *t, uint32_t s, int dev, uint32_t why, uint32_t flags, uint64_t time, uint64_t total,
		   uint64_t free_b)
{
	last_time = time;
	struct tlm_rec_devmem d = {.sample = s, .device = dev, .why = why, .flags = flags,
				   .time_ns = RT_START + time, .total = total, .free = free_b};
	assert_int_equal(tlm_tw_devmem(rt_writer(t), &d), 0);
}

/* NVML's answer: status, then n (pid, used) pairs */
static void procs(struct rt *t, uint32_t s, int dev, int status, uint32_t n, ...)
{
	static struct tlm_rec_devprocs p; /* 4 KiB: off the stack */
	memset(&p, 0, sizeof p);
	p.sample = s;
	p.device = dev;
	p.status = status;
	p.time_ns = RT_START + last_time + procs_lag;
	p.n = n;
	va_list ap;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		p.p[i].pid = va_arg(ap, uint32_t);
		p.p[i].used = va_arg(ap, uint64_t);
	}
	va_end(ap);
	assert_int_equal(tlm_tw_devprocs(rt_writer(t), &p), 0);
}

static char *line_of(const struct tlm_report_devview *v)
{
	static char buf[1024];
	return tlm_report_devview_line(v, PID, buf, sizeof buf);
}

static char *html_of(struct tlm_report *r)
{
	char *buf = NULL, err[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(tlm_report_html(r, f, err, sizeof err), 0);
	fclose(f);
	return buf;
}

static void lines_fit(const char *text, size_t max_lines)
{
	size_t n = 0;
	for (const char *p = text; *p; n++) {
		const char *e = strchr(p, '\n');
		assert_non_null(e);
		assert_in_range((size_t)(e - p), 0, 100);
		p = e + 1;
	}
	assert_in_range(n, 1, max_lines);
}

static struct tlm_jv *json_of(struct tlm_report *r, char **text)
{
	*text = rt_render(r, tlm_report_json);
	char err[256];
	struct tlm_jv *v = tlm_json_parse(*text, strlen(*text), err, sizeof err);
	assert_non_null(v);
	return v;
}

static uint64_t ju(const struct tlm_jv *o, const char *k)
{
	uint64_t u = 0;
	assert_true(tlm_jv_u64(tlm_jv_get(o, k), &u));
	return u;
}

/* 64 MiB then 32 MiB on device 0 of 1 GiB, then a 1 GiB request fails; pid
 * 5000 holds 32 MiB all along; this process's context costs 8 MiB. */
static void three_samples(struct rt *t, bool nvml_procs)
{
	uint64_t ip[] = {0x401000};
	rt_stack(t, 1, ip, 1);
	rt_alloc(t, TLM_KIND_DEVICE, DEV, 64 * MiB, 1 * MS, 1, 0);
	sample(t, 0, 0, TLM_DEVMEM_START, 0, 1 * MS, GiB, GiB - 104 * MiB);
	if (nvml_procs)
		procs(t, 0, 0, 0, 2, PID, 72 * MiB, 5000u, 32 * MiB);
	rt_alloc(t, TLM_KIND_DEVICE, DEV + GiB, 32 * MiB, 2 * MS, 1, 0);
	sample(t, 1, 0, TLM_DEVMEM_PEAK, 0, 2 * MS, GiB, GiB - 136 * MiB);
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, GiB, 3 * MS, 1, 0, 2, GiB - 136 * MiB);
	sample(t, 2, 0, TLM_DEVMEM_OOM, 0, 3 * MS, GiB, GiB - 136 * MiB);
}

static void test_nvml_other_process(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	three_samples(t, true);
	procs(t, 2, 0, 0, 2, 5000u, 32 * MiB, PID, 104 * MiB); /* any order, any time after its sample */
	procs(t, 1, 0, 0, 2, PID, 104 * MiB, 5000u, 32 * MiB);
	rt_free(t, TLM_KIND_DEVICE, DEV + GiB, 4 * MS, 0);
	char *path = rt_close(t, true, 5 * MS);
	struct tlm_report *r = rt_report(path);
	const struct tlm_report_devmem *m = r->devmem;
	assert_non_null(m);
	assert_int_equal(m->samples, 3);
	assert_int_equal(m->unplaced, 0);
	assert_int_equal(m->ndevs, 1);
	const struct tlm_report_devmem_dev *d = &m->devs[0];
	assert_true(d->have_start && d->have_peak && d->peak_exact);
	assert_int_equal(d->start.tracked, 64 * MiB);
	assert_int_equal(d->start.used, 104 * MiB);
	assert_int_equal(d->start.others, 32 * MiB);
	assert_int_equal(d->start.unattributed, 8 * MiB);
	assert_true(d->start.split);
	assert_int_equal(d->start.self_nvml, 72 * MiB);
	assert_int_equal(d->start.time_ns, 1 * MS);
	assert_int_equal(d->peak.sample, 1);
	assert_int_equal(d->peak.tracked, 96 * MiB);
	assert_int_equal(d->peak.unattributed, 8 * MiB);
	assert_int_equal(d->peak.self_nvml, 104 * MiB);
	assert_int_equal(r->nooms, 1);
	const struct tlm_report_devview *o = tlm_report_oom_devview(r, 0);
	assert_non_null(o);
	assert_int_equal(o->sample, 2);
	assert_int_equal(o->tracked, 96 * MiB);
	assert_int_equal(o->others, 32 * MiB);
	assert_string_equal(line_of(o),
			    "96.0 MiB tracked, 8.0 MiB context and untracked, 32.0 MiB held by pid 5000 (of 1.0 GiB; "
			    "888.0 MiB free)");

	char *text = rt_render(r, tlm_report_text);
	lines_fit(text, 200);
	assert_non_null(strstr(text, "DEVICE MEMORY: what the device said (cuMemGetInfo; other processes: NVML)\n"
				     "dev moment          at      total       used       free    tracked   untracked "
				     "other procs\n"
				     "  0 start       0.001s    1.0 GiB  104.0 MiB  920.0 MiB   64.0 MiB     8.0 MiB "
				     "   32.0 MiB\n"
				     "      NVML: this process 72.0 MiB; other processes: pid 5000 32.0 MiB\n"
				     "  0 peak        0.002s    1.0 GiB  136.0 MiB  888.0 MiB   96.0 MiB     8.0 MiB "
				     "   32.0 MiB\n"));
	assert_non_null(strstr(text, "  0 oom 1       0.003s    1.0 GiB  136.0 MiB  888.0 MiB   96.0 MiB     8.0 MiB"));
	assert_non_null(strstr(text, "      device: 96.0 MiB tracked, 8.0 MiB context and untracked, 32.0 MiB held by "
				     "pid 5000\n        (of 1.0 GiB; 888.0 MiB free)\n"));
	char *sum = rt_render(r, tlm_report_summary);
	if (getenv("DM_DUMP"))
		fprintf(stderr, "%s\n----\n%s", text, sum);
	lines_fit(sum, 25);
	assert_non_null(strstr(sum, "  raised 0.003s dev 0: 1.0 GiB requested, 888.0 MiB free on the device: exhaustion\n"
				    "    96.0 MiB tracked, 8.0 MiB context and untracked, 32.0 MiB held by pid 5000"
				    " (of 1.0 GiB)\n"));

	char *js;
	struct tlm_jv *v = json_of(r, &js);
	const struct tlm_jv *dm = tlm_jv_get(v, "device_memory");
	assert_non_null(dm);
	assert_int_equal(ju(dm, "samples"), 3);
	const struct tlm_jv *pk = tlm_jv_get(tlm_jv_at(tlm_jv_get(dm, "devices"), 0), "peak");
	assert_int_equal(ju(pk, "tracked_bytes"), 96 * MiB);
	assert_int_equal(ju(pk, "untracked_bytes"), 8 * MiB);
	assert_int_equal(ju(pk, "other_processes_bytes"), 32 * MiB);
	assert_int_equal(ju(pk, "this_process_nvml_bytes"), 104 * MiB);
	assert_int_equal(tlm_jv_get(tlm_jv_at(tlm_jv_get(dm, "devices"), 0), "peak_is_reserved_peak")->b, true);
	const struct tlm_jv *od = tlm_jv_get(tlm_jv_at(tlm_jv_get(v, "ooms"), 0), "device_memory");
	assert_non_null(od);
	assert_int_equal(ju(od, "used_bytes"), 136 * MiB);
	assert_string_equal(tlm_jv_str(tlm_jv_get(od, "nvml")), "ok");
	assert_int_equal(tlm_jv_len(tlm_jv_get(od, "nvml_processes")), 2);
	assert_int_equal(ju(tlm_jv_at(tlm_jv_get(od, "nvml_processes"), 0), "pid"), 5000);
	assert_string_equal(tlm_jv_str(tlm_jv_get(od, "diagnosis")), line_of(o));
	tlm_json_free(v);

	char *html = html_of(r);
	assert_non_null(strstr(html, "<h2 id=\"device-memory\">Device memory</h2>"));
	assert_non_null(strstr(html, "<tr class=\"oom-diagnosis\"><td colspan=\"10\">device: 96.0 MiB tracked, 8.0 MiB "
				     "context and untracked, 32.0 MiB held by pid 5000 (of 1.0 GiB; 888.0 MiB free)"));
	assert_non_null(strstr(html, "pid 4242 (this process): 72.0 MiB, pid 5000: 32.0 MiB"));
	free(html);
	free(js);
	free(sum);
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* No NVML: the rest of used is one figure, named for what it may be. */
static void test_without_nvml(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	three_samples(t, false); /* start: no DEVPROCS record at all */
	procs(t, 1, 0, 999, 0);  /* peak: NVML answered with an error */
	procs(t, 2, 0, TLM_DEVPROCS_NO_NVML, 0);
	char *path = rt_close(t, true, 5 * MS);
	struct tlm_report *r = rt_report(path);
	const struct tlm_report_devmem_dev *d = &r->devmem->devs[0];
	assert_false(d->start.split);
	assert_int_equal(d->start.nvml, TLM_DM_NVML_NOT_RECORDED);
	assert_int_equal(d->start.unattributed, 40 * MiB);
	assert_int_equal(d->peak.nvml, TLM_DM_NVML_ERROR);
	assert_string_equal(line_of(&d->start), "64.0 MiB tracked, 40.0 MiB untracked or other processes (of 1.0 GiB; "
						"920.0 MiB free; no NVML record: no per-process figures)");
	assert_string_equal(line_of(&d->peak), "96.0 MiB tracked, 40.0 MiB untracked or other processes (of 1.0 GiB; "
					       "888.0 MiB free; NVML error 999: no per-process figures)");
	const struct tlm_report_devview *o = tlm_report_oom_devview(r, 0);
	assert_string_equal(line_of(o), "96.0 MiB tracked, 40.0 MiB untracked or other processes (of 1.0 GiB; "
					"888.0 MiB free; NVML not loaded: no per-process figures)");
	char *sum = rt_render(r, tlm_report_summary);
	assert_non_null(strstr(sum, "\n    96.0 MiB tracked, 40.0 MiB untracked or other processes (of 1.0 GiB; NVML not "
				    "loaded)\n"));
	free(sum);
	char *text = rt_render(r, tlm_report_text);
	lines_fit(text, 200);
	assert_non_null(strstr(text, "  0 start       0.001s    1.0 GiB  104.0 MiB  920.0 MiB   64.0 MiB           - "
				     "          -\n      40.0 MiB untracked or other processes: no NVML record: no "
				     "per-process figures\n"));
	char *js;
	struct tlm_jv *v = json_of(r, &js);
	const struct tlm_jv *od = tlm_jv_get(tlm_jv_at(tlm_jv_get(v, "ooms"), 0), "device_memory");
	assert_int_equal(tlm_jv_get(od, "untracked_bytes")->type, TLM_JV_NULL);
	assert_int_equal(tlm_jv_get(od, "other_processes_bytes")->type, TLM_JV_NULL);
	assert_int_equal(ju(od, "unattributed_bytes"), 40 * MiB);
	assert_string_equal(tlm_jv_str(tlm_jv_get(od, "nvml")), "absent");
	int64_t st = 0;
	assert_true(tlm_jv_i64(tlm_jv_get(od, "nvml_status"), &st));
	assert_int_equal(st, -1);
	tlm_json_free(v);
	free(js);
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* In a container NVML gives host pids: none is this trace's pid, so none
 * can be called another process. */
static void test_container_pids(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	three_samples(t, false);
	procs(t, 2, 0, 0, 2, 90001u, 104 * MiB, 90002u, 32 * MiB);
	char *path = rt_close(t, true, 5 * MS);
	struct tlm_report *r = rt_report(path);
	const struct tlm_report_devview *o = tlm_report_oom_devview(r, 0);
	assert_false(o->self_listed);
	assert_false(o->split);
	assert_int_equal(o->others, 0);
	assert_int_equal(o->unattributed, 40 * MiB);
	assert_string_equal(line_of(o), "96.0 MiB tracked, 40.0 MiB untracked or other processes (of 1.0 GiB; "
					"888.0 MiB free; NVML lists pid 90001, 90002 but not pid 4242 (another pid "
					"namespace, e.g. a container))");
	char *text = rt_render(r, tlm_report_text);
	lines_fit(text, 200);
	assert_non_null(strstr(text, "      NVML lists: pid 90001 104.0 MiB, pid 90002 32.0 MiB\n"));
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* A high reached without a sample (rate limit) is sampled before the free
 * that lowers it (F_BEFORE): that sample is the peak state. */
static void test_before_free(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV, 64 * MiB, 1 * MS, 0, 0);
	sample(t, 0, 0, TLM_DEVMEM_START, 0, 1 * MS, GiB, GiB - 72 * MiB);
	rt_alloc(t, TLM_KIND_DEVICE, DEV + GiB, 32 * MiB, 1 * MS + 10, 0, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV + GiB, 1 * MS + 20, 0);
	sample(t, 1, 0, TLM_DEVMEM_PEAK, TLM_DEVMEM_F_BEFORE, 1 * MS + 20, GiB, GiB - 104 * MiB);
	procs(t, 1, 0, 0, 1, PID, 104 * MiB);
	/* a sample after a free that is not F_BEFORE sees the state after it */
	rt_alloc(t, TLM_KIND_DEVICE, DEV + 2 * GiB, 16 * MiB, 2 * MS, 0, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV + 2 * GiB, 3 * MS, 0);
	sample(t, 2, 0, TLM_DEVMEM_EXIT, 0, 4 * MS, GiB, GiB - 72 * MiB);
	char *path = rt_close(t, true, 5 * MS);
	struct tlm_report *r = rt_report(path);
	const struct tlm_report_devmem_dev *d = &r->devmem->devs[0];
	assert_true(d->peak_exact);
	assert_int_equal(d->peak.sample, 1);
	assert_true(d->peak.before);
	assert_int_equal(d->peak.tracked, 96 * MiB);
	assert_int_equal(d->peak.unattributed, 8 * MiB);
	assert_true(d->peak.split);
	assert_string_equal(line_of(&d->peak), "96.0 MiB tracked, 8.0 MiB context and untracked, no other process "
					       "(of 1.0 GiB; 920.0 MiB free)");
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* The shim asks NVML from its writer thread, up to a drain later: another
 * process that started in between makes NVML's list exceed what the device
 * used at the sample. Nothing of it is subtracted then. */
static void test_stale_nvml(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV, 64 * MiB, 1 * MS, 0, 0);
	sample(t, 0, 0, TLM_DEVMEM_START, 0, 1 * MS, 256 * MiB, 184 * MiB);
	procs_lag = 14 * MS;
	procs(t, 0, 0, 0, 2, PID, 72 * MiB, 6000u, 168 * MiB);
	procs_lag = 0;
	char *path = rt_close(t, true, 20 * MS);
	struct tlm_report *r = rt_report(path);
	const struct tlm_report_devview *v = &r->devmem->devs[0].start;
	assert_true(v->stale);
	assert_false(v->split);
	assert_int_equal(v->nvml_lag_ns, 14 * MS);
	assert_int_equal(v->unattributed, 8 * MiB);
	assert_string_equal(line_of(v), "64.0 MiB tracked, 8.0 MiB untracked or other processes (of 256.0 MiB; "
					"184.0 MiB free; NVML answered 14.0 ms after the sample and lists more than was "
					"used then (the processes changed in between))");
	char *text = rt_render(r, tlm_report_text);
	lines_fit(text, 200);
	assert_non_null(strstr(text, "      NVML 14.0 ms later lists: pid 4242 72.0 MiB, pid 6000 168.0 MiB\n"));
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* Two devices, several other processes, one of which NVML gives no bytes for. */
static void test_devices_and_processes(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV + 4 * GiB, 10 * MiB, 1 * MS, 0, 1);
	sample(t, 0, 1, TLM_DEVMEM_START, 0, 1 * MS, 512 * MiB, 482 * MiB);
	rt_alloc(t, TLM_KIND_DEVICE, DEV, 20 * MiB, 2 * MS, 0, 0);
	sample(t, 1, 0, TLM_DEVMEM_START, 0, 2 * MS, GiB, GiB - 32 * MiB);
	procs(t, 1, 0, 0, 5, 7u, MiB, 9u, MiB, PID, 28 * MiB, 11u, MiB, 12u, MiB);
	procs(t, 0, 1, 0, 4, PID, 18 * MiB, 7u, 4 * MiB, 8u, UINT64_MAX, 9u, 2 * MiB);
	char *path = rt_close(t, true, 5 * MS);
	struct tlm_report *r = rt_report(path);
	const struct tlm_report_devmem *m = r->devmem;
	assert_int_equal(m->ndevs, 2);
	assert_int_equal(m->devs[0].device, 0);
	assert_int_equal(m->devs[1].device, 1);
	assert_int_equal(m->devs[0].start.tracked, 20 * MiB);
	assert_int_equal(m->devs[1].start.tracked, 10 * MiB);
	assert_string_equal(line_of(&m->devs[0].start),
			    "20.0 MiB tracked, 8.0 MiB context and untracked, 4.0 MiB held by 4 other processes: pid 7 "
			    "1.0 MiB, pid 9 1.0 MiB, pid 11 1.0 MiB, 1 more (of 1.0 GiB; 992.0 MiB free)");
	const struct tlm_report_devview *v = &m->devs[1].start;
	assert_true(v->self_listed);
	assert_false(v->split);
	assert_int_equal(v->others, 6 * MiB);
	assert_int_equal(v->unattributed, 14 * MiB);
	assert_string_equal(line_of(v), "10.0 MiB tracked, 14.0 MiB untracked or other processes, 6.0 MiB held by 3 "
					"other processes: pid 7 4.0 MiB, pid 8 ?, pid 9 2.0 MiB (of 512.0 MiB; 482.0 MiB "
					"free; NVML did not give every process's bytes)");
	char *text = rt_render(r, tlm_report_text);
	lines_fit(text, 200);
	free(text);
	char *js;
	struct tlm_jv *j = json_of(r, &js);
	const struct tlm_jv *p8 = tlm_jv_at(tlm_jv_get(tlm_jv_get(tlm_jv_at(tlm_jv_get(tlm_jv_get(j, "device_memory"),
											 "devices"), 1), "start"),
							 "nvml_processes"), 2);
	assert_int_equal(ju(p8, "pid"), 8);
	assert_int_equal(tlm_jv_get(p8, "used_bytes")->type, TLM_JV_NULL);
	tlm_json_free(j);
	free(js);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* The OOMs each get their own sample; one without a sample gets no line;
 * PyTorch's allocator OOM takes the sample of the driver failure it folds. */
static void test_oom_links(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV, 64 * MiB, 1 * MS, 0, 0);
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, GiB, 2 * MS, 0, 0, 2, 900 * MiB); /* no sample */
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, GiB, 3 * MS, 0, 0, 2, 900 * MiB);
	sample(t, 0, 0, TLM_DEVMEM_OOM, 0, 3 * MS, GiB, 900 * MiB);
	/* the allocator's turn: a block, a driver failure (sampled), its OOM */
	struct tlm_event e = {.op = TLM_OP_ALLOC, .kind = TLM_KIND_BLOCK, .addr = DEV, .size = MiB,
			      .time_ns = 4 * MS, .flags = TLM_EVF_NO_TOTALS};
	rt_event(t, &e);
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 2 * GiB, 5 * MS, 0, 0, 2, 800 * MiB);
	sample(t, 1, 0, TLM_DEVMEM_OOM, 0, 5 * MS, GiB, 800 * MiB);
	e = (struct tlm_event){.op = TLM_OP_ALLOC, .kind = TLM_KIND_BLOCK, .size = 2 * GiB - 5, .time_ns = 5 * MS + 1,
			       .result = 2, .flags = TLM_EVF_NO_TOTALS};
	rt_event(t, &e);
	char *path = rt_close(t, true, 6 * MS);
	struct tlm_report *r = rt_report(path);
	assert_int_equal(r->nooms, 3);
	assert_null(tlm_report_oom_devview(r, 0));
	assert_int_equal(tlm_report_oom_devview(r, 1)->sample, 0);
	assert_true(r->ooms[2].allocator);
	assert_int_equal(r->ooms[2].driver_failures, 1);
	assert_int_equal(tlm_report_oom_devview(r, 2)->sample, 1);
	assert_int_equal(tlm_report_oom_devview(r, 2)->used, 224 * MiB);
	char *text = rt_render(r, tlm_report_text);
	const char *s1 = strstr(text, "   1. 0.002s"), *s2 = strstr(text, "   2. 0.003s");
	assert_non_null(s1);
	assert_non_null(s2);
	const char *d1 = strstr(s1, "      device: ");
	assert_true(d1 > s2); /* the first OOM has none */
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* A sample that does not follow its event (here: before any event) has no
 * known state: counted, left out. */
static void test_unplaced(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	sample(t, 0, 0, TLM_DEVMEM_START, 0, 0, GiB, GiB);
	rt_alloc(t, TLM_KIND_DEVICE, DEV, MiB, 1 * MS, 0, 0);
	char *path = rt_close(t, true, 2 * MS);
	struct tlm_report *r = rt_report(path);
	assert_non_null(r->devmem);
	assert_int_equal(r->devmem->samples, 1);
	assert_int_equal(r->devmem->unplaced, 1);
	assert_int_equal(r->devmem->ndevs, 0);
	char *text = rt_render(r, tlm_report_text);
	assert_non_null(strstr(text, "  1 sample not placed after their event (damaged trace) left out\n"));
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* Hostile values: odd devices, free above total, sizes near 2^64, NVML
 * records for no sample or twice for one, an EXIT sample first: one
 * well-formed report, lines within 100 columns, JSON that parses. */
static void test_hostile(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	sample(t, 9, 3, TLM_DEVMEM_EXIT, 0, 0, GiB, GiB);
	procs(t, 77, 3, 0, 1, PID, UINT64_MAX);
	rt_alloc(t, TLM_KIND_DEVICE, DEV, UINT64_MAX - 5, 1 * MS, 0, -7);
	sample(t, 0, -7, TLM_DEVMEM_START, TLM_DEVMEM_F_BEFORE, 1 * MS, MiB, 2 * MiB);
	procs(t, 0, -7, 0, 3, PID, UINT64_MAX - 1, 1u, UINT64_MAX - 1, 2u, UINT64_MAX - 1);
	procs(t, 0, -7, 0, 1, 5u, 5u);
	rt_alloc(t, TLM_KIND_DEVICE, DEV + GiB, 3, 2 * MS, 0, INT16_MAX);
	sample(t, 1, INT32_MAX, 99, 0xff, 2 * MS, UINT64_MAX, 0);
	sample(t, 2, INT16_MAX, TLM_DEVMEM_PEAK, 0, 2 * MS, UINT64_MAX, 0);
	procs(t, 2, INT16_MAX, 7, 0);
	char *path = rt_close(t, true, 3 * MS);
	struct tlm_report *r = rt_report(path);
	assert_non_null(r->devmem);
	assert_int_equal(r->devmem->samples, 4);
	assert_int_equal(r->devmem->unplaced, 1); /* the unknown why */
	const struct tlm_report_devview *v = &r->devmem->devs[0].start;
	assert_int_equal(v->device, -7);
	assert_int_equal(v->used, 0);
	assert_int_equal(v->nprocs, 3); /* the first record for a sample counts */
	char *text = rt_render(r, tlm_report_text), *sum = rt_render(r, tlm_report_summary), *html = html_of(r);
	lines_fit(text, 400);
	lines_fit(sum, 25);
	char *js;
	struct tlm_jv *j = json_of(r, &js);
	tlm_json_free(j);
	free(js);
	free(html);
	free(sum);
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* Without samples nothing is added anywhere. */
static void test_no_samples(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV, MiB, 1 * MS, 0, 0);
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, GiB, 2 * MS, 0, 0, 2, 900 * MiB);
	char *path = rt_close(t, true, 3 * MS);
	struct tlm_report *r = rt_report(path);
	assert_null(r->devmem);
	assert_null(tlm_report_oom_devview(r, 0));
	char *text = rt_render(r, tlm_report_text), *js = rt_render(r, tlm_report_json), *html = html_of(r);
	char *sum = rt_render(r, tlm_report_summary);
	assert_null(strstr(text, "DEVICE MEMORY"));
	assert_null(strstr(text, "      device: "));
	assert_null(strstr(js, "device_memory"));
	assert_null(strstr(html, "device-memory"));
	assert_null(strstr(html, "oom-diagnosis"));
	assert_null(strstr(sum, "tracked"));
	free(sum);
	free(html);
	free(js);
	free(text);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvml_other_process), cmocka_unit_test(test_without_nvml),
		cmocka_unit_test(test_container_pids),     cmocka_unit_test(test_before_free),
		cmocka_unit_test(test_devices_and_processes), cmocka_unit_test(test_oom_links),
		cmocka_unit_test(test_unplaced),           cmocka_unit_test(test_stale_nvml),
		cmocka_unit_test(test_hostile),           cmocka_unit_test(test_no_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
