/* SPDX-License-Identifier: MIT */
/*
 * hw_late.c - a library the hardening workload links, whose destructor makes
 * CUDA calls (HW_LATE=1). It does not depend on libtlm.so, and the preload
 * comes before it in the load order, so its destructor runs after libtlm's
 * (after the final flush and the END record) and before libcudart's (which
 * it depends on): these events arrive after the trace was closed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "hw_common.h"

/* The truth writer lives here so that it works until the very end. */
static int truth_fd(void)
{
	static int fd = -2;
	if (fd == -2) {
		const char *t = getenv("TLM_TEST_TRUTH");
		fd = t && *t ? open(t, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
	}
	return fd;
}

static void put_line(const char *fmt, va_list ap)
{
	char b[512];
	int n = vsnprintf(b, sizeof b - 1, fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof b - 2)
		n = (int)sizeof b - 2;
	b[n++] = '\n';
	int fd = truth_fd();
	if (fd >= 0 && write(fd, b, (size_t)n) != n)
		abort();
}

static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	put_line(fmt, ap);
	va_end(ap);
}

void hw_expect_alloc(uint64_t addr, uint64_t size)
{
	line("E %u %u %u %llx %llu 0 0 0 0 %u", TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc,
	     (unsigned long long)addr, (unsigned long long)size, TLM_EVF_RUNTIME);
}

void hw_expect_free(uint64_t addr)
{
	line("E %u %u %u %llx 0 0 0 0 0 %u", TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFree,
	     (unsigned long long)addr, TLM_EVF_RUNTIME);
}

void hw_notef(const char *fmt, ...)
{
	char f[256];
	snprintf(f, sizeof f, "N %s", fmt);
	va_list ap;
	va_start(ap, fmt);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	put_line(f, ap);
#pragma GCC diagnostic pop
	va_end(ap);
}

__attribute__((destructor)) static void late_dtor(void)
{
	if (!getenv("HW_LATE"))
		return;
	for (int i = 0; i < 3; i++) {
		void *p;
		if (cudaMalloc(&p, 5000 + (size_t)i) != 0) {
			hw_notef("dtor_alloc_failed %d", i);
			continue;
		}
		hw_expect_alloc((uint64_t)(uintptr_t)p, 5000 + (uint64_t)i);
		cudaFree(p);
		hw_expect_free((uint64_t)(uintptr_t)p);
	}
	hw_notef("dtor_done 1");
}
