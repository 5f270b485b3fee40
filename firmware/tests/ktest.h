/*
 * Minimal test harness for the kernel unit tests (host port).
 *
 * Output, one line per case, parsed by tests/firmware/test_kernel.py:
 *   PASS <case>
 *   FAIL <case>: <file>:<line>: <what>
 *   SUMMARY <program>: passed=<n> failed=<m>
 * Checks may run in any kernel thread; a case fails when any check failed
 * or when its run ended with an unexpected exit code (e.g. a deadlock).
 *
 * Cases record what happens in an event log (kt_log) and compare it to the
 * exact expected sequence, which is how scheduling order is asserted.
 */
#ifndef KTEST_H
#define KTEST_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "host.h"
#include "kernel/arch.h"
#include "kernel/board.h"
#include "kernel/kernel.h"

#define KT_LOG_SIZE 4096
#define KT_STACK_SIZE (64 * 1024)
#define KT_MAX_THREADS 16

extern char kt_log_buf[KT_LOG_SIZE];
extern int kt_case_failed;
extern char kt_first_failure[256];

void kt_fail(const char *file, int line, const char *fmt, ...);
/* Append a space-separated token (printf format) to the event log. */
void kt_log(const char *fmt, ...);
/* Create a thread on a stack from the per-case pool. */
k_thread_t *kt_spawn(const char *name, uint8_t prio, k_entry_t entry, void *arg);
/* k_init() and clear the log and the thread pool; every case starts here. */
void kt_reset(void);
void kt_run_case(const char *name, void (*fn)(void));
int kt_summary(const char *program);

#define KT_CHECK(cond)                                                        \
	do {                                                                  \
		if (!(cond))                                                  \
			kt_fail(__FILE__, __LINE__, "check failed: %s", #cond); \
	} while (0)

#define KT_EQ(actual, expected)                                               \
	do {                                                                  \
		long long kt_a_ = (long long)(actual);                        \
		long long kt_e_ = (long long)(expected);                      \
		if (kt_a_ != kt_e_)                                           \
			kt_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", \
				#actual, kt_a_, kt_e_);                       \
	} while (0)

#define KT_LOG_IS(expected)                                                   \
	do {                                                                  \
		if (strcmp(kt_log_buf, (expected)) != 0)                      \
			kt_fail(__FILE__, __LINE__, "log \"%s\", expected \"%s\"", \
				kt_log_buf, (expected));                      \
	} while (0)

/* Run entry as the case's main thread at prio; the run must end normally. */
#define KT_RUN(entry, arg, prio) KT_EQ(host_run((entry), (arg), (prio)), 0)

#define KT_CASE(fn) kt_run_case(#fn, fn)

#endif /* KTEST_H */
