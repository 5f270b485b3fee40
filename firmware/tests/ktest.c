#include "ktest.h"

char kt_log_buf[KT_LOG_SIZE];
int kt_case_failed;
char kt_first_failure[256];

static int passed;
static int failed;
static k_thread_t pool_threads[KT_MAX_THREADS];
static uint8_t pool_stacks[KT_MAX_THREADS][KT_STACK_SIZE] __attribute__((aligned(16)));
static int pool_used;

void kt_fail(const char *file, int line, const char *fmt, ...)
{
	if (kt_case_failed++ != 0)
		return; /* report the first failure of a case */
	int n = snprintf(kt_first_failure, sizeof(kt_first_failure), "%s:%d: ", file, line);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(kt_first_failure + n, sizeof(kt_first_failure) - (size_t)n, fmt, ap);
	va_end(ap);
}

void kt_log(const char *fmt, ...)
{
	size_t len = strlen(kt_log_buf);
	if (len != 0 && len + 1 < KT_LOG_SIZE)
		kt_log_buf[len++] = ' ';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(kt_log_buf + len, KT_LOG_SIZE - len, fmt, ap);
	va_end(ap);
}

k_thread_t *kt_spawn(const char *name, uint8_t prio, k_entry_t entry, void *arg)
{
	if (pool_used == KT_MAX_THREADS) {
		kt_fail(__FILE__, __LINE__, "thread pool exhausted");
		return NULL;
	}
	k_thread_t *t = &pool_threads[pool_used];
	int rc = k_thread_create(t, name, prio, pool_stacks[pool_used], KT_STACK_SIZE, entry, arg);
	pool_used++;
	if (rc != K_OK)
		kt_fail(__FILE__, __LINE__, "k_thread_create(%s) = %d", name, rc);
	return t;
}

void kt_reset(void)
{
	k_init();
	kt_log_buf[0] = '\0';
	memset(pool_threads, 0, sizeof(pool_threads));
	pool_used = 0;
}

void kt_run_case(const char *name, void (*fn)(void))
{
	kt_case_failed = 0;
	kt_reset();
	fn();
	if (kt_case_failed) {
		printf("FAIL %s: %s\n", name, kt_first_failure);
		failed++;
	} else {
		printf("PASS %s\n", name);
		passed++;
	}
	fflush(stdout);
}

int kt_summary(const char *program)
{
	printf("SUMMARY %s: passed=%d failed=%d\n", program, passed, failed);
	return failed == 0 ? 0 : 1;
}
