/*
 * Semaphores and mutexes: wait-queue order, counts, priority inheritance
 * (basic, transitive, nested, undone by timeout and by priority change),
 * recursion, deletion. Priorities: 0 highest.
 */
#include "ktest.h"

static k_sem_t sem_a;
static k_sem_t sem_l; /* holds L inside its critical section */
static k_mutex_t mtx1;
static k_mutex_t mtx2;

static void taker(void *arg)
{
	(void)arg;
	KT_EQ(k_sem_take(&sem_a, K_FOREVER), K_OK);
	kt_log("%s", k_thread_self()->name);
}

/* ---------------------------------------------------------------- semaphores */

static void waitq_order_main(void *arg)
{
	(void)arg;
	/* main is least urgent: each new thread runs at once and queues, so
	 * arrival order (30, 10a, 20, 10b) differs from priority order. */
	kt_spawn("p30", 30, taker, NULL);
	kt_spawn("p10a", 10, taker, NULL);
	kt_spawn("p20", 20, taker, NULL);
	kt_spawn("p10b", 10, taker, NULL);
	for (int i = 0; i < 4; i++)
		KT_EQ(k_sem_give(&sem_a), K_OK); /* each wakes the first waiter, which preempts */
}

static void waitq_priority_order(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(waitq_order_main, NULL, 200);
	KT_LOG_IS("p10a p10b p20 p30");
}

static void counting_main(void *arg)
{
	(void)arg;
	KT_EQ(k_sem_count(&sem_a), 2);
	KT_EQ(k_sem_take(&sem_a, K_NO_WAIT), K_OK);
	KT_EQ(k_sem_take(&sem_a, K_NO_WAIT), K_OK);
	KT_EQ(k_sem_take(&sem_a, K_NO_WAIT), K_EAGAIN);
	KT_EQ(k_sem_count(&sem_a), 0);
	for (int i = 0; i < 3; i++)
		KT_EQ(k_sem_give(&sem_a), K_OK);
	KT_EQ(k_sem_give(&sem_a), K_EOVERFLOW);
	KT_EQ(k_sem_count(&sem_a), 3);
	/* Binary semaphore: a second give is refused. */
	k_sem_t bin;
	KT_EQ(k_sem_init(&bin, 0, 1), K_OK);
	KT_EQ(k_sem_give(&bin), K_OK);
	KT_EQ(k_sem_give(&bin), K_EOVERFLOW);
	KT_EQ(k_sem_count(&bin), 1);
	KT_EQ(k_sem_init(&bin, 2, 1), K_EINVAL);
	KT_EQ(k_sem_init(&bin, 0, 0), K_EINVAL);
}

static void counting_semaphore(void)
{
	k_sem_init(&sem_a, 2, 3);
	KT_RUN(counting_main, NULL, 5);
}

static void deleted_waiter(void *arg)
{
	(void)arg;
	KT_EQ(k_sem_take(&sem_a, K_FOREVER), K_EDELETED);
	kt_log("%s", k_thread_self()->name);
}

static void sem_delete_main(void *arg)
{
	(void)arg;
	kt_spawn("A", 10, deleted_waiter, NULL);
	kt_spawn("B", 10, deleted_waiter, NULL);
	k_sleep(1);
	kt_log("del");
	KT_EQ(k_sem_delete(&sem_a), K_OK);
	kt_log("after");
	k_sleep(1);
}

static void sem_delete_wakes_waiters(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(sem_delete_main, NULL, 5);
	KT_LOG_IS("del after A B");
}

/* ---------------------------------------------------------------- inheritance */

static k_thread_t *th_l;
static k_thread_t *th_mid;

/* L: lock mtx1, wait for the go, report its priority, unlock, report again. */
static void low_holder(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK);
	kt_log("L:locked");
	k_sem_take(&sem_l, K_FOREVER);
	kt_log("L:%u", k_thread_priority_get(k_thread_self()));
	KT_EQ(k_mutex_unlock(&mtx1), K_OK);
	kt_log("L:%u", k_thread_priority_get(k_thread_self()));
}

static void high_locker(void *arg)
{
	k_mutex_t *m = arg;
	kt_log("%s:lock", k_thread_self()->name);
	KT_EQ(k_mutex_lock(m, K_FOREVER), K_OK);
	KT_CHECK(k_mutex_owner(m) == k_thread_self());
	kt_log("%s:got", k_thread_self()->name);
	KT_EQ(k_mutex_unlock(m), K_OK);
}

static void log_name(void *arg)
{
	(void)arg;
	kt_log("%s", k_thread_self()->name);
}

static void pi_basic_main(void *arg)
{
	(void)arg;
	th_l = kt_spawn("L", 30, low_holder, NULL);
	k_sleep(1); /* L takes mtx1 and waits for the go */
	kt_spawn("Mid", 20, log_name, NULL);
	kt_spawn("H", 10, high_locker, &mtx1);
	KT_EQ(k_sem_give(&sem_l), K_OK);
	KT_EQ(k_thread_priority_get(th_l), 30);
	k_sleep(1);
	/* H blocks on mtx1 -> L runs at 10, ahead of Mid; unlock drops L to 30
	 * and hands mtx1 to H, which preempts; then Mid, then L. */
	KT_EQ(k_thread_priority_get(th_l), 30);
	KT_CHECK(k_mutex_owner(&mtx1) == NULL);
}

static void pi_basic(void)
{
	k_sem_init(&sem_l, 0, 1);
	k_mutex_init(&mtx1);
	KT_RUN(pi_basic_main, NULL, 2);
	KT_LOG_IS("L:locked H:lock L:10 H:got Mid L:30");
}

/* Mid holds mtx2 and waits for mtx1 (held by L); H waits for mtx2. */
static void mid_chain(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx2, K_FOREVER), K_OK);
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK);
	kt_log("Mid:%u", k_thread_priority_get(k_thread_self()));
	KT_EQ(k_mutex_unlock(&mtx1), K_OK);
	KT_EQ(k_mutex_unlock(&mtx2), K_OK); /* H preempts here */
	kt_log("Mid:%u", k_thread_priority_get(k_thread_self()));
}

static void chain_waiter(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx2, K_FOREVER), K_OK);
	kt_log("H");
	KT_EQ(k_mutex_unlock(&mtx2), K_OK);
}

static void pi_transitive_main(void *arg)
{
	(void)arg;
	th_l = kt_spawn("L", 30, low_holder, NULL);
	k_sleep(1);
	th_mid = kt_spawn("Mid", 20, mid_chain, NULL);
	k_sleep(1);
	KT_EQ(k_thread_priority_get(th_l), 20);
	kt_spawn("H", 10, chain_waiter, NULL);
	k_sleep(1);
	KT_EQ(k_thread_priority_get(th_mid), 10);
	KT_EQ(k_thread_priority_get(th_l), 10); /* through Mid: two hops */
	KT_EQ(k_thread_base_priority_get(th_l), 30);
	KT_EQ(k_sem_give(&sem_l), K_OK);
	k_sleep(1);
}

static void pi_transitive(void)
{
	k_sem_init(&sem_l, 0, 1);
	k_mutex_init(&mtx1);
	k_mutex_init(&mtx2);
	KT_RUN(pi_transitive_main, NULL, 2);
	KT_LOG_IS("L:locked L:10 Mid:10 H Mid:20 L:30");
}

/* L owns two mutexes with waiters of different priority. */
static void nested_holder(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK);
	KT_EQ(k_mutex_lock(&mtx2, K_FOREVER), K_OK);
	k_sem_take(&sem_l, K_FOREVER);
	kt_log("L:%u", k_thread_priority_get(k_thread_self()));
	KT_EQ(k_mutex_unlock(&mtx2), K_OK); /* B (10) gets it and preempts */
	kt_log("L:%u", k_thread_priority_get(k_thread_self()));
	KT_EQ(k_mutex_unlock(&mtx1), K_OK); /* A (20) gets it and preempts */
	kt_log("L:%u", k_thread_priority_get(k_thread_self()));
}

static void pi_nested_main(void *arg)
{
	(void)arg;
	th_l = kt_spawn("L", 30, nested_holder, NULL);
	k_sleep(1);
	kt_spawn("A", 20, high_locker, &mtx1);
	kt_spawn("B", 10, high_locker, &mtx2);
	k_sleep(1);
	KT_EQ(k_thread_priority_get(th_l), 10);
	KT_EQ(k_sem_give(&sem_l), K_OK);
	k_sleep(1);
}

static void pi_nested_mutexes(void)
{
	k_sem_init(&sem_l, 0, 1);
	k_mutex_init(&mtx1);
	k_mutex_init(&mtx2);
	KT_RUN(pi_nested_main, NULL, 2);
	KT_LOG_IS("B:lock A:lock L:10 B:got L:20 A:got L:30");
}

static void timed_locker(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx1, 3), K_ETIMEDOUT);
	kt_log("H:timeout@%u", (unsigned)k_tick_get());
	KT_EQ(k_thread_priority_get(th_l), 30); /* inheritance undone */
}

static void pi_timeout_main(void *arg)
{
	(void)arg;
	th_l = kt_spawn("L", 30, low_holder, NULL);
	k_sleep(1);
	kt_spawn("H", 10, timed_locker, NULL);
	k_sleep(1); /* H blocks at tick 1 with a 3-tick timeout */
	KT_EQ(k_thread_priority_get(th_l), 10);
	k_sleep(5);
	KT_EQ(k_thread_priority_get(th_l), 30);
	KT_EQ(k_sem_give(&sem_l), K_OK);
	k_sleep(1);
}

static void pi_undone_by_timeout(void)
{
	k_sem_init(&sem_l, 0, 1);
	k_mutex_init(&mtx1);
	KT_RUN(pi_timeout_main, NULL, 2);
	KT_LOG_IS("L:locked H:timeout@4 L:30 L:30");
}

static void pi_prio_change_main(void *arg)
{
	(void)arg;
	th_l = kt_spawn("L", 30, low_holder, NULL);
	k_sleep(1);
	k_thread_t *h = kt_spawn("H", 10, high_locker, &mtx1);
	k_sleep(1); /* H blocks on mtx1 */
	KT_EQ(k_thread_priority_get(th_l), 10);
	KT_EQ(k_thread_priority_set(h, 25), K_OK); /* a waiter's change propagates */
	KT_EQ(k_thread_priority_get(th_l), 25);
	KT_EQ(k_thread_priority_set(h, 40), K_OK);
	KT_EQ(k_thread_priority_get(th_l), 30);
	KT_EQ(k_thread_priority_set(h, 5), K_OK);
	KT_EQ(k_thread_priority_get(th_l), 5);
	/* Lowering the owner's base does not undo inheritance. */
	KT_EQ(k_thread_priority_set(th_l, 50), K_OK);
	KT_EQ(k_thread_priority_get(th_l), 5);
	KT_EQ(k_sem_give(&sem_l), K_OK);
	k_sleep(1);
}

static void pi_follows_waiter_priority(void)
{
	k_sem_init(&sem_l, 0, 1);
	k_mutex_init(&mtx1);
	KT_RUN(pi_prio_change_main, NULL, 2);
	KT_LOG_IS("L:locked H:lock L:5 H:got L:50");
}

/* ---------------------------------------------------------------- mutex rules */

static void not_owner(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_unlock(&mtx1), K_EPERM);
	KT_EQ(k_mutex_lock(&mtx1, K_NO_WAIT), K_EAGAIN);
	kt_log("N");
}

static void recursive_main(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK);
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK);
	kt_spawn("N", 1, not_owner, NULL);
	KT_EQ(k_mutex_unlock(&mtx1), K_OK);
	KT_CHECK(k_mutex_owner(&mtx1) == k_thread_self()); /* still held once */
	KT_EQ(k_mutex_unlock(&mtx1), K_OK);
	KT_CHECK(k_mutex_owner(&mtx1) == NULL);
	KT_EQ(k_mutex_unlock(&mtx1), K_EPERM);
}

static void mutex_recursion_and_ownership(void)
{
	k_mutex_init(&mtx1);
	KT_RUN(recursive_main, NULL, 5);
	KT_LOG_IS("N");
}

static void holder_forever(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK);
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK); /* recursion count 2 */
	k_sem_take(&sem_l, K_FOREVER);
}

static void owner_delete_main(void *arg)
{
	(void)arg;
	th_l = kt_spawn("L", 30, holder_forever, NULL);
	k_sleep(1);
	kt_spawn("H", 10, high_locker, &mtx1);
	KT_EQ(k_thread_priority_get(th_l), 10);
	kt_log("del");
	KT_EQ(k_thread_delete(th_l), K_OK); /* releases mtx1 to H, which preempts */
	kt_log("after");
	KT_CHECK(k_mutex_owner(&mtx1) == NULL);
}

static void delete_owner_releases_mutex(void)
{
	k_sem_init(&sem_l, 0, 1);
	k_mutex_init(&mtx1);
	KT_RUN(owner_delete_main, NULL, 20);
	KT_LOG_IS("H:lock del H:got after");
}

static void waiter_delete_main(void *arg)
{
	(void)arg;
	th_l = kt_spawn("L", 30, low_holder, NULL);
	k_sleep(1);
	k_thread_t *h = kt_spawn("H", 10, high_locker, &mtx1);
	k_sleep(1); /* H blocks on mtx1 */
	KT_EQ(k_thread_priority_get(th_l), 10);
	KT_EQ(k_thread_delete(h), K_OK); /* a deleted waiter stops lending */
	KT_EQ(k_thread_priority_get(th_l), 30);
	KT_EQ(k_sem_give(&sem_l), K_OK);
	k_sleep(1);
}

static void delete_waiter_undoes_inheritance(void)
{
	k_sem_init(&sem_l, 0, 1);
	k_mutex_init(&mtx1);
	KT_RUN(waiter_delete_main, NULL, 2);
	KT_LOG_IS("L:locked H:lock L:30 L:30");
}

static void mutex_deleted_waiter(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_EDELETED);
	kt_log("W");
}

static void mutex_delete_main(void *arg)
{
	(void)arg;
	KT_EQ(k_mutex_lock(&mtx1, K_FOREVER), K_OK);
	kt_spawn("W", 1, mutex_deleted_waiter, NULL);
	KT_EQ(k_thread_priority_get(k_thread_self()), 1);
	kt_log("del");
	KT_EQ(k_mutex_delete(&mtx1), K_OK);
	KT_EQ(k_thread_priority_get(k_thread_self()), 5);
}

static void mutex_delete_wakes_waiters(void)
{
	k_mutex_init(&mtx1);
	KT_RUN(mutex_delete_main, NULL, 5);
	KT_LOG_IS("del W");
}

int main(void)
{
	KT_CASE(waitq_priority_order);
	KT_CASE(counting_semaphore);
	KT_CASE(sem_delete_wakes_waiters);
	KT_CASE(pi_basic);
	KT_CASE(pi_transitive);
	KT_CASE(pi_nested_mutexes);
	KT_CASE(pi_undone_by_timeout);
	KT_CASE(pi_follows_waiter_priority);
	KT_CASE(mutex_recursion_and_ownership);
	KT_CASE(delete_owner_releases_mutex);
	KT_CASE(delete_waiter_undoes_inheritance);
	KT_CASE(mutex_delete_wakes_waiters);
	return kt_summary("test_sync");
}
