/* SPDX-License-Identifier: MIT */
/*
 * cmd_run_simulate.c - `tlm run --simulate SIZE[,SIZE...] [--devices N]`:
 * the program runs on the simulated CUDA device instead of a GPU.
 *
 * Contract: tlm_simulate_option() consumes the two options from cmd_run.c's
 * argument loop; tlm_simulate_prepare() (parent, before fork) checks them,
 * finds the simulated driver and libtlm_simblas.so, and says the limits on
 * stderr; tlm_simulate_child() (child, before exec) sets TLM_SIM_DEVICES and
 * TLM_SIM_MEMORY and appends the simulated libcuda.so.1, libnvidia-ml.so.1,
 * libtlm_simblas.so and libtlm_simnccl.so to LD_PRELOAD after libtlm.so.
 * Preloading the simulated libcuda.so.1 makes every dlopen("libcuda.so.1")
 * of the program's CUDA runtime find it (same soname), so a real driver
 * installed on the machine is never used by this program (NVML likewise).
 * Unless TLM_SIM_MACHINE is set already, prepare also creates a fresh empty
 * machine file for the run (/dev/shm, else $TMPDIR or /tmp; unique name;
 * removed when tlm exits) and the child names it in TLM_SIM_MACHINE, so
 * every process of the run shares the simulated devices' memory. See
 * docs/simulate.md.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/text.h"
#include "cmd_run_simulate.h"
#include "cmds.h"

#define SIM_MAX_DEVICES 16
#define SIM_PAGE (2ull << 20)
#define SIM_MAX_BYTES (256ull << 30)

static const char *sizes;   /* the --simulate argument */
static int ndev;            /* --devices, 0 = one per listed size */
static char driver[PATH_MAX], blas[PATH_MAX], nvml[PATH_MAX], nccl[PATH_MAX];
static char machine[PATH_MAX]; /* the run's machine file, "" when none was made */

int tlm_simulate_option(int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = NULL;
	int which;
	if (!strcmp(a, "--simulate") || !strcmp(a, "--devices")) {
		if (*i + 1 >= argc)
			return -1;
		which = a[2] == 's';
		v = argv[++*i];
	} else if (!strncmp(a, "--simulate=", 11)) {
		which = 1, v = a + 11;
	} else if (!strncmp(a, "--devices=", 10)) {
		which = 0, v = a + 10;
	} else {
		return 0;
	}
	if (which) {
		sizes = v;
	} else {
		char *end;
		long n = strtol(v, &end, 10);
		if (end == v || *end || n < 1 || n > SIM_MAX_DEVICES) {
			tlm_text_line(stderr, "tlm run: --devices: expected 1..%d, got '%s'\n", SIM_MAX_DEVICES, v);
			return -2;
		}
		ndev = (int)n;
	}
	return 1;
}

int tlm_simulate_active(void)
{
	return sizes != NULL;
}

/* one size as the simulated driver reads it: digits, then K, M or G (1024-based) */
static int parse_size(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	size_t i = 0;
	for (; i < n && isdigit((unsigned char)s[i]); i++) {
		if (v > SIM_MAX_BYTES)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0)
		return -1;
	if (i < n) {
		switch (s[i]) {
		case 'k': case 'K': mul = 1ull << 10; break;
		case 'm': case 'M': mul = 1ull << 20; break;
		case 'g': case 'G': mul = 1ull << 30; break;
		default: return -1;
		}
		if (i + 1 != n && !(i + 2 == n && (s[i + 1] == 'B' || s[i + 1] == 'b')))
			return -1;
	}
	if (v > SIM_MAX_BYTES / mul || v * mul < SIM_PAGE)
		return -1;
	*out = v * mul / SIM_PAGE * SIM_PAGE;
	return 0;
}

static int find_beside_tlm(const char *name, char *out)
{
	const char *dir = getenv("TLM_SIM_DIR");
	char cand[PATH_MAX + 64];
	struct stat st;
	if (dir && *dir) {
		snprintf(cand, sizeof cand, "%s/%s", dir, name);
		return stat(cand, &st) == 0 && realpath(cand, out) ? 0 : -1;
	}
	return tlm__find_beside(TLM__BESIDE_SIM, name, out, PATH_MAX);
}

static void human(uint64_t b, char *out, size_t n)
{
	if (b % (1ull << 30) == 0)
		snprintf(out, n, "%llu GiB", (unsigned long long)(b >> 30));
	else
		snprintf(out, n, "%llu MiB", (unsigned long long)(b >> 20));
}

static void remove_machine(void)
{
	if (machine[0])
		unlink(machine);
}

/* A fresh machine file for this run: the first simulated driver to attach
 * fills it in (sim_machine.c). */
static int make_machine(void)
{
	const char *tmp = getenv("TMPDIR");
	const char *dirs[] = {"/dev/shm", tmp && *tmp ? tmp : "/tmp", "/tmp"};
	const char *env = getenv("TLM_SIM_MACHINE");
	if (env && *env)
		return 0; /* the caller's machine: shared with processes outside the run */
	for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
		snprintf(machine, sizeof machine, "%s/tlm-sim-machine-XXXXXX", dirs[k]);
		int fd = mkstemp(machine);
		if (fd >= 0) {
			close(fd);
			atexit(remove_machine);
			return 0;
		}
	}
	machine[0] = 0;
	fprintf(stderr, "tlm run: --simulate: cannot create the simulated machine's file in "
			"/dev/shm, $TMPDIR or /tmp\n");
	return -1;
}

int tlm_simulate_prepare(void)
{
	uint64_t bytes[SIM_MAX_DEVICES];
	int listed = 0;
	for (const char *s = sizes;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		if (listed == SIM_MAX_DEVICES || parse_size(s, n, &bytes[listed]) != 0) {
			fprintf(stderr,
				"tlm run: --simulate: bad size list '%s' (expected e.g. 80G or 80G,40G: "
				"2M..256G each, at most %d)\n", sizes, SIM_MAX_DEVICES);
			return -1;
		}
		listed++;
		if (!comma)
			break;
		s = comma + 1;
	}
	if (ndev == 0)
		ndev = listed;
	if (listed > 1 && listed != ndev) {
		fprintf(stderr, "tlm run: --simulate lists %d sizes but --devices is %d\n", listed, ndev);
		return -1;
	}
	if (find_beside_tlm("libcuda.so.1", driver) != 0 ||
	    find_beside_tlm("libtlm_simblas.so", blas) != 0 ||
	    find_beside_tlm("libnvidia-ml.so.1", nvml) != 0 ||
	    find_beside_tlm("libtlm_simnccl.so", nccl) != 0) {
		fprintf(stderr, "tlm run: --simulate: cannot find the simulated driver (libcuda.so.1, "
			"libnvidia-ml.so.1, libtlm_simblas.so and libtlm_simnccl.so; set TLM_SIM_DIR "
			"to their directory)\n");
		return -1;
	}
	if (make_machine() != 0)
		return -1;
	char h[32];
	human(bytes[0], h, sizeof h);
	tlm_text_line(stderr, "tlm: simulated CUDA device: %d x %s", ndev, h);
	for (int d = 1; d < listed; d++) {
		human(bytes[d], h, sizeof h);
		tlm_text_line(stderr, ", %s", h);
	}
	fputs(" (no GPU is used; see docs/simulate.md)\n"
	      "tlm:   every allocation decision is the real library's (PyTorch, cuBLAS, cuDNN, NCCL); no kernel\n"
	      "tlm:   runs and GEMMs do no math, so values read back from the device are not computed ones and\n"
	      "tlm:   code whose shapes or branches depend on tensor values may take other paths than on a GPU;\n"
	      "tlm:   NCCL moves no data between ranks; cuDNN's convolutions, BatchNorm and attention run, its\n"
	      "tlm:   RNNs (nn.LSTM, nn.GRU) fail with a cuDNN error\n",
	      stderr);
	return 0;
}

void tlm_simulate_child(void)
{
	char n[16];
	snprintf(n, sizeof n, "%d", ndev);
	setenv("TLM_SIM_DEVICES", n, 1);
	setenv("TLM_SIM_MEMORY", sizes, 1);
	if (machine[0])
		setenv("TLM_SIM_MACHINE", machine, 1);
	/* NVIDIA's CUPTI does not run on the simulated driver (it recurses
	 * through export tables the simulator does not serve), and every call
	 * is interposed anyway: keep it off unless the user asked for it */
	setenv("TLM_CUPTI", "off", 0);
	/* every pair of simulated devices reaches the other (peer access, NVML's
	 * P2P status), as over NVLink; NCCL's own rule reads the host's PCI tree
	 * instead, which is not the simulated one, and would then pick peer-to-peer
	 * or shared host memory by the host CPU's vendor (docs/simulate.md, NCCL) */
	setenv("NCCL_P2P_LEVEL", "SYS", 0);
	const char *prev = getenv("LD_PRELOAD");
	size_t l = (prev ? strlen(prev) : 0) + strlen(driver) + strlen(nvml) + strlen(blas) +
		   strlen(nccl) + 5;
	char *pre = malloc(l);
	if (!pre)
		return;
	snprintf(pre, l, "%s%s%s %s %s %s", prev ? prev : "", prev && *prev ? " " : "", driver, nvml,
		 blas, nccl);
	setenv("LD_PRELOAD", pre, 1);
	free(pre);
}
