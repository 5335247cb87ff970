/* SPDX-License-Identifier: MIT */
/*
 * tlm_test.h - what every test program shares: the signal state its
 * children start with, and the one skip rule.
 *
 * tlm_test_child_signals(): in a child between fork and exec. Every signal's
 * disposition back to SIG_DFL and an empty signal mask, as a program expects
 * at its start: the test's own caller may have left SIGINT and SIGQUIT
 * ignored (a background job of a script), SIGHUP ignored (nohup) or signals
 * blocked, and a child inherits all of that through exec. Async-signal-safe.
 *
 * tlm_test_skip(WHAT, fmt, ...): skips the current cmocka test through
 * tests/common/skip.sh, which prints the reason and decides: under CI=true
 * the test fails instead unless WHAT is something no bootstrap can provide
 * (gpu, privilege, build; see skip.sh). Include <cmocka.h> first.
 */
#ifndef TLM_TEST_H
#define TLM_TEST_H

void tlm_test_child_signals(void);

/* 1: the skip is allowed (skip the test); 0: it is a failure */
int tlm_test_skip_allowed(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define tlm_test_skip(what, ...)                                \
	do {                                                    \
		if (tlm_test_skip_allowed((what), __VA_ARGS__)) \
			skip();                                 \
		else                                            \
			fail_msg("skipped, not allowed in CI"); \
	} while (0)

#endif
