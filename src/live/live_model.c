/* SPDX-License-Identifier: MIT */
/*
 * live_model.c - one trace followed while it is written: the file waited
 * for, its records read in follow mode and fed to the analysis's replay,
 * stacks and frames as tlm_report_build() feeds them, the history of each
 * device by second, and the end: the trace's (END, exec) or the process's.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/input.h"
#include "live_int.h"
#include "render/render.h" /* tlm__cupti_prop */

#define CHECK_NS 500000000ull   /* an idle trace's process is looked at twice a second */

uint64_t tlm__live_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool tlm__live_pid_gone(uint32_t pid, uint64_t start_mono)
{
	if (!pid || pid > (uint32_t)INT32_MAX)
		return false;
	char p[64], buf[1024];
	snprintf(p, sizeof p, "/proc/%u/stat", pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* after the command's closing parenthesis: state, then fields 4.. */
	char *q = strrchr(buf, ')');
	if (!q || q[1] != ' ')
		return false;
	char state = q[2];
	if (state == 'Z' || state == 'X')
		return true; /* exited, not yet reaped */
	unsigned long long start_ticks = 0;
	char *s = q + 2;
	for (int field = 3; field < 22 && s; field++)
		s = strchr(s + 1, ' ');
	if (!s || sscanf(s + 1, "%llu", &start_ticks) != 1)
		return false;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return false;
	/* /proc counts from boot on CLOCK_BOOTTIME; a process started after the
	 * trace did is another one that took the pid */
	uint64_t started_boot = (uint64_t)start_ticks * (1000000000ull / (uint64_t)hz);
	uint64_t offset = clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC);
	return started_boot > start_mono + offset + 1000000000ull;
}

struct tlm_live *tlm_live_open(const char *path)
{
	struct tlm_live *l = calloc(1, sizeof *l);
	if (!l || !(l->path = strdup(path)) || !(l->rec = malloc(sizeof *l->rec))) {
		if (l)
			free(l->path);
		free(l);
		return NULL;
	}
	l->state = TLM_LIVE_WAITING;
	snprintf(l->why, sizeof l->why, "waiting for the trace to be written");
	return l;
}

const char *tlm_live_path(const struct tlm_live *l)
{
	return l->path;
}

enum tlm_live_state tlm_live_state(const struct tlm_live *l)
{
	return l->state;
}

static void fail(struct tlm_live *l, const char *why)
{
	l->state = TLM_LIVE_FAILED;
	tlm__live_clip(l->why, sizeof l->why, why);
}

/* The model tlm_report_build() makes, empty (build.c). */
static int model_init(struct tlm_live *l)
{
	const struct tlm_trace_header *h = tlm_reader_header(l->rd);
	struct tlm_report *rep = l->rep = calloc(1, sizeof *l->rep);
	if (!rep || !(rep->priv = calloc(1, sizeof *rep->priv)))
		return -1;
	if (tlm__priv_init(rep->priv)) {
		free(rep->priv);
		rep->priv = NULL;
		return -1;
	}
	if (!(rep->path = strdup(l->path)) || tlm__replay_init(&l->rp, rep))
		return -1;
	l->rp_ok = true;
	if (tlm__lsteps_init(&l->steps))
		return -1;
	l->steps_ok = true;
	rep->pid = h->pid;
	rep->job.ppid = h->ppid;
	rep->job.rank = rep->job.local_rank = rep->job.world_size = -1;
	tlm__live_clip(rep->job.host, sizeof rep->job.host, h->host);
	rep->job.start_realtime_ns = h->start_realtime_ns;
	l->rp.start = l->start = h->start_monotonic_ns;
	char host[256] = "";
	l->same_host = gethostname(host, sizeof host - 1) == 0 && !strcmp(host, h->host);
	return 0;
}

static struct tlm__lhist *hist_of(struct tlm_live *l, int device, int kind)
{
	for (size_t i = 0; i < l->nhist; i++)
		if (l->hist[i].device == device && l->hist[i].kind == kind)
			return &l->hist[i];
	if (l->nhist == TLM_LIVE_DEVS)
		return NULL;
	struct tlm__lhist *h = &l->hist[l->nhist++];
	memset(h, 0, sizeof *h);
	h->device = device;
	h->kind = kind;
	h->sec = -1;
	return h;
}

/* Moves h to second sec, carrying the values of the seconds in between. */
void tlm__lhist_advance(struct tlm__lhist *h, int64_t sec);
void tlm__lhist_advance(struct tlm__lhist *h, int64_t sec)
{
	if (h->sec >= sec)
		return;
	int64_t from = h->sec < 0 || sec - h->sec > TLM_LIVE_HIST ? sec - TLM_LIVE_HIST + 1 : h->sec + 1;
	if (from < 0)
		from = 0;
	for (int64_t s = from; s <= sec; s++) {
		h->res[s % TLM_LIVE_HIST] = h->cur_res;
		h->alloc[s % TLM_LIVE_HIST] = h->cur_alloc;
	}
	h->sec = sec;
}

/* After the replay took ev: the (device, kind) it touched, by second. */
static void history(struct tlm_live *l, const struct tlm_event *ev)
{
	const struct tlm__accts *s = &l->rp.accts;
	if (s->last >= s->n)
		return;
	const struct tlm__acct *a = &s->a[s->last]; /* the one the replay just used */
	struct tlm__lhist *h = hist_of(l, a->device, a->mkind);
	if (!h)
		return;
	int64_t sec = ev->time_ns > l->start ? (int64_t)((ev->time_ns - l->start) / 1000000000ull) : 0;
	tlm__lhist_advance(h, sec);
	h->cur_res = a->reserved;
	h->cur_alloc = a->allocated;
	size_t i = (size_t)(h->sec % TLM_LIVE_HIST);
	if (a->reserved > h->res[i])
		h->res[i] = a->reserved;
	if (a->allocated > h->alloc[i])
		h->alloc[i] = a->allocated;
}

static int record(struct tlm_live *l, const struct tlm_record *rec)
{
	struct tlm_report *rep = l->rep;
	switch (rec->type) {
	case TLM_REC_EVENT:
		tlm__replay_event(&l->rp, &rec->u.ev);
		tlm__lsteps_event(&l->steps, &l->rp, &rec->u.ev);
		history(l, &rec->u.ev);
		break;
	case TLM_REC_DEVMEM:
		if (rec->u.devmem.device >= 0 && rec->u.devmem.device < TLM_LIVE_DEVS)
			l->total[rec->u.devmem.device] = rec->u.devmem.total;
		break;
	case TLM_REC_STACK:
		return tlm__stacks_add(&rep->priv->stacks, rec->u.stack.id, rec->u.stack.ip, rec->u.stack.depth);
	case TLM_REC_MODULE:
		tlm__priv_module(rep->priv, &rec->u.module);
		break;
	case TLM_REC_STRING:
		return tlm__priv_string(rep->priv, &rec->u.string);
	case TLM_REC_PYSTACK:
		return tlm__priv_pystack(rep->priv, &rec->u.pystack);
	case TLM_REC_MODULE_UNLOAD:
		tlm__priv_module_unload(rep->priv, rec->u.module_unload);
		break;
	case TLM_REC_PROP:
		tlm__cupti_prop(&rec->u.prop, rep->cupti_state, sizeof rep->cupti_state, rep->cupti_detail,
				sizeof rep->cupti_detail);
		tlm__job_prop(&rep->job, &rec->u.prop);
		break;
	case TLM_REC_SIGNAL:
		if (!l->have_signal)
			rep->signo = rec->u.signal;
		l->have_signal = true;
		break;
	case TLM_REC_END:
		tlm__replay_end(&l->rp, rec->u.end.end_monotonic_ns);
		break;
	default:
		break;
	}
	return l->rp.oom_error ? -1 : 0;
}

/* Opens the file once it holds a whole header; a file not there yet, empty
 * or with a header still being written is waited for. */
static void try_open(struct tlm_live *l)
{
	struct stat st;
	if (stat(l->path, &st) != 0) {
		snprintf(l->why, sizeof l->why, "waiting for the trace to appear (%s)", strerror(errno));
		return;
	}
	char err[256];
	if (tlm_input_kind(st.st_mode)) { /* a FIFO, a device: nothing to follow, never waited on */
		snprintf(err, sizeof err, "not a regular file (%s)", tlm_input_kind(st.st_mode));
		fail(l, err);
		return;
	}
	l->rd = tlm_reader_open(l->path, err, sizeof err);
	if (!l->rd) {
		if (!strncmp(err, "truncated header", 16) || !strcmp(err, "not a tlm trace (empty file)"))
			snprintf(l->why, sizeof l->why, "waiting for the trace header");
		else
			fail(l, err);
		return;
	}
	tlm_reader_follow(l->rd, true);
	if (model_init(l)) {
		fail(l, "out of memory");
		return;
	}
	l->state = TLM_LIVE_RUNNING;
	l->why[0] = 0;
	l->idle_since_ns = tlm__live_mono_ns();
}

/* Reads the rest as a plain reader does, and says how the process ended. */
static void finish(struct tlm_live *l)
{
	tlm_reader_follow(l->rd, false);
	int k;
	while ((k = tlm_reader_next(l->rd, l->rec)) == 1)
		if (record(l, l->rec)) {
			fail(l, "out of memory");
			return;
		}
	l->state = TLM_LIVE_ENDED;
	tlm__replay_settle_all(&l->rp);
	switch (tlm_reader_state(l->rd)) {
	case TLM_TRACE_CLEAN: tlm__live_clip(l->why, sizeof l->why, tlm_reader_end_how(l->rd)); break;
	case TLM_TRACE_SIGNAL: snprintf(l->why, sizeof l->why, "signal %d", l->rep->signo); break;
	default: snprintf(l->why, sizeof l->why, "truncated (the process ended without ending its trace)"); break;
	}
}

void tlm_live_stop(struct tlm_live *l)
{
	if (l->state == TLM_LIVE_RUNNING) {
		finish(l);
	} else if (l->state == TLM_LIVE_WAITING) {
		try_open(l);
		if (l->state == TLM_LIVE_RUNNING)
			finish(l);
		else if (l->state == TLM_LIVE_WAITING)
			fail(l, "no trace was written");
	}
}

void tlm_live_settle(struct tlm_live *l)
{
	if (l->state == TLM_LIVE_RUNNING && l->same_host && tlm__live_pid_gone(l->rep->pid, l->start))
		finish(l);
}

int tlm_live_poll(struct tlm_live *l, uint64_t budget)
{
	if (l->state == TLM_LIVE_WAITING)
		try_open(l);
	if (l->state != TLM_LIVE_RUNNING)
		return 0;
	uint64_t before = tlm_reader_offset(l->rd), n = 0;
	int k;
	while (n < budget && (k = tlm_reader_next(l->rd, l->rec)) == 1) {
		n++;
		if (record(l, l->rec)) {
			fail(l, "out of memory");
			return 0;
		}
	}
	l->caught_up = n < budget;
	if (n == budget)
		return 1;
	uint64_t now = tlm__live_mono_ns();
	if (tlm_reader_offset(l->rd) != before)
		l->idle_since_ns = now;
	/* the trace says the process ended (END, or its image replaced) */
	if (tlm_reader_state(l->rd) == TLM_TRACE_CLEAN) {
		finish(l);
		return 0;
	}
	struct stat st;
	if (stat(l->path, &st) == 0 && (uint64_t)st.st_size < tlm_reader_offset(l->rd)) {
		fail(l, "the file became shorter than what was read (replaced or cut while read)");
		return 0;
	}
	if (now - l->idle_since_ns >= CHECK_NS && now >= l->next_check_ns) {
		l->next_check_ns = now + CHECK_NS;
		if (l->same_host && tlm__live_pid_gone(l->rep->pid, l->start))
			finish(l);
	}
	return 0;
}

void tlm_live_close(struct tlm_live *l)
{
	if (!l)
		return;
	if (l->steps_ok)
		tlm__lsteps_fini(&l->steps);
	if (l->rp_ok)
		tlm__replay_fini(&l->rp);
	if (l->rep) {
		l->rep->live = NULL; /* the view's, never owned by the report */
		l->rep->nlive = 0;
		tlm_report_free(l->rep);
	}
	if (l->rd)
		tlm_reader_close(l->rd);
	free(l->view);
	free(l->rec);
	free(l->path);
	free(l);
}
