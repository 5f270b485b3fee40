/*
 * latscope porting layer on Linux pthreads.
 *
 * Mapping (see docs/porting.md for what differs from an RTOS):
 *   threads     pthreads, SCHED_FIFO 98-p when permitted; detached; deleted
 *               with pthread_cancel (takes effect at the target's next
 *               blocking bench call, bench_sleep or bench_thread_yield)
 *   suspend     SIGUSR1 parks the target in sigsuspend() until SIGUSR2
 *   semaphores  POSIX sem_t plus a maximum count checked under a lock
 *   mutexes     pthread_mutex PTHREAD_PRIO_INHERIT, recursive
 *   msg queues  ring buffer + PI mutex + two CLOCK_MONOTONIC condvars
 *   interrupts  one SCHED_FIFO 99 thread per attached line waiting for a
 *               GPIO edge through libgpiod (LATSCOPE_IRQ<n>_GPIO=chip:line,
 *               builds with LATSCOPE_HAVE_GPIOD), a UIO device
 *               (LATSCOPE_IRQ<n>_UIO) or a software raise (also periodic:
 *               bench_linux_raise_every); the handler runs holding the
 *               global "interrupt lock" that bench_irq_lock() takes, so
 *               critical sections and the other lines' handlers exclude it
 *               (bench_linux_irq_priority ranks the lines' threads)
 *   CPUs        every bench thread on one CPU: LATSCOPE_CPU=n, else the last
 *               isolated CPU, else the last one allowed (docs/duts/raspberry-pi.md)
 *   ticks       1 ms of CLOCK_MONOTONIC (Linux has no user-visible tick)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "gpiod_compat.h"
#include "latscope/bench_api.h"

#define NATIVE_TOP 98 /* bench priority 0 */
#define IRQ_NATIVE_PRIO 99
#define MIN_STACK (64u * 1024u)
#define SIG_SUSPEND SIGUSR1
#define SIG_RESUME SIGUSR2

/* ------------------------------------------------------------ common */

static int realtime = 1; /* cleared on the first EPERM */
static struct timespec start_time;
static __thread int self_id = -1;

int bench_linux_realtime(void)
{
	return realtime;
}

static struct timespec deadline_after(bench_ticks_t ticks)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ns = (uint64_t)ticks * BENCH_LINUX_TICK_NS + (uint64_t)ts.tv_nsec;
	ts.tv_sec += (time_t)(ns / 1000000000u);
	ts.tv_nsec = (long)(ns % 1000000000u);
	return ts;
}

static int native_prio(int prio)
{
	return NATIVE_TOP - prio;
}

static bool valid_prio(int prio)
{
	return prio >= 0 && prio < BENCH_PRIO_COUNT;
}

/* ------------------------------------------------------------ threads */

typedef struct {
	pthread_t handle;
	bool alive;
	int prio;
	bench_thread_entry_t entry;
	void *arg;
	volatile sig_atomic_t suspended;
	sem_t parked; /* posted by the target once it is parked */
	sem_t exited; /* posted when the thread is gone (return or cancel) */
} thread_slot_t;

static thread_slot_t threads[BENCH_MAX_THREADS + 1];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_suspend_signal(int sig)
{
	(void)sig;
	if (self_id < 0)
		return;
	thread_slot_t *t = &threads[self_id];
	sigset_t wait_mask;
	pthread_sigmask(SIG_BLOCK, NULL, &wait_mask);
	sigdelset(&wait_mask, SIG_RESUME); /* SIG_RESUME is blocked while in here */
	sem_post(&t->parked);
	while (t->suspended)
		sigsuspend(&wait_mask);
}

static void on_resume_signal(int sig)
{
	(void)sig;
}

static void install_signal_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_suspend_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIG_RESUME);
	sigaction(SIG_SUSPEND, &sa, NULL);
	sa.sa_handler = on_resume_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIG_RESUME, &sa, NULL);
}

static void thread_gone(void *arg)
{
	thread_slot_t *t = arg;
	pthread_mutex_lock(&table_lock);
	t->alive = false;
	pthread_mutex_unlock(&table_lock);
	sem_post(&t->exited);
}

static void *thread_main(void *arg)
{
	thread_slot_t *t = arg;
	self_id = (int)(t - threads);
	pthread_cleanup_push(thread_gone, t);
	t->entry(t->arg);
	pthread_cleanup_pop(1);
	return NULL;
}

static int start_thread(thread_slot_t *t, int prio, size_t stack_size, bool detached)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (stack_size < MIN_STACK)
		stack_size = MIN_STACK;
	pthread_attr_setstacksize(&attr, stack_size);
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = EPERM;
	if (realtime) {
		struct sched_param sp = {.sched_priority = native_prio(prio)};
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
		rc = pthread_create(&t->handle, &attr, thread_main, t);
		if (rc == EPERM) { /* no RT rights: fall back once and for all */
			realtime = 0;
			fputs("linux: no SCHED_FIFO rights: threads run SCHED_OTHER, "
			      "priorities are not honoured\n", stderr);
		}
	}
	if (!realtime) {
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		rc = pthread_create(&t->handle, &attr, thread_main, t);
	}
	pthread_attr_destroy(&attr);
	return rc;
}

static thread_slot_t *thread_of(int id)
{
	if (id < 0 || id > BENCH_MAX_THREADS)
		return NULL;
	thread_slot_t *t = &threads[id];
	pthread_mutex_lock(&table_lock);
	bool alive = t->alive;
	pthread_mutex_unlock(&table_lock);
	return alive ? t : NULL;
}

static int create_slot(int id, int prio, size_t stack_size, bench_thread_entry_t entry,
		       void *arg, bool detached)
{
	thread_slot_t *t = &threads[id];
	pthread_mutex_lock(&table_lock);
	if (t->alive) {
		pthread_mutex_unlock(&table_lock);
		return BENCH_ERROR;
	}
	t->alive = true;
	pthread_mutex_unlock(&table_lock);
	t->prio = prio;
	t->entry = entry;
	t->arg = arg;
	t->suspended = 0;
	sem_destroy(&t->parked);
	sem_destroy(&t->exited);
	sem_init(&t->parked, 0, 0);
	sem_init(&t->exited, 0, 0);
	if (start_thread(t, prio, stack_size, detached) != 0) {
		t->alive = false;
		return BENCH_ERROR;
	}
	return BENCH_SUCCESS;
}

int bench_thread_create(int id, const char *name, int prio, size_t stack_size,
			bench_thread_entry_t entry, void *arg)
{
	(void)name;
	if (id < 0 || id >= BENCH_MAX_THREADS || !valid_prio(prio) || entry == NULL)
		return BENCH_ERROR;
	return create_slot(id, prio, stack_size, entry, arg, true);
}

int bench_thread_delete(int id)
{
	thread_slot_t *t = thread_of(id);
	if (t == NULL)
		return BENCH_ERROR;
	if (id == self_id)
		pthread_exit(NULL); /* runs thread_gone */
	if (t->suspended) {
		t->suspended = 0; /* a parked thread must run to reach a cancellation point */
		pthread_kill(t->handle, SIG_RESUME);
	}
	pthread_cancel(t->handle);
	while (sem_wait(&t->exited) != 0 && errno == EINTR)
		;
	return BENCH_SUCCESS;
}

int bench_thread_self(void)
{
	return self_id;
}

void bench_thread_yield(void)
{
	sched_yield();
	pthread_testcancel();
}

int bench_thread_set_priority(int id, int prio)
{
	thread_slot_t *t = thread_of(id);
	if (t == NULL || !valid_prio(prio))
		return BENCH_ERROR;
	t->prio = prio;
	if (realtime && pthread_setschedprio(t->handle, native_prio(prio)) != 0)
		return BENCH_ERROR;
	return BENCH_SUCCESS;
}

int bench_thread_get_priority(int id)
{
	thread_slot_t *t = thread_of(id);
	return t ? t->prio : -1;
}

int bench_thread_suspend(int id)
{
	thread_slot_t *t = thread_of(id);
	if (t == NULL)
		return BENCH_ERROR;
	if (t->suspended)
		return BENCH_SUCCESS;
	t->suspended = 1;
	if (pthread_kill(t->handle, SIG_SUSPEND) != 0)
		return BENCH_ERROR;
	if (id != self_id) /* synchronous: return once the target is parked */
		while (sem_wait(&t->parked) != 0 && errno == EINTR)
			;
	return BENCH_SUCCESS;
}

int bench_thread_resume(int id)
{
	thread_slot_t *t = thread_of(id);
	if (t == NULL)
		return BENCH_ERROR;
	if (t->suspended) {
		t->suspended = 0;
		pthread_kill(t->handle, SIG_RESUME);
	}
	return BENCH_SUCCESS;
}

void bench_sleep(bench_ticks_t ticks)
{
	if (ticks == 0) {
		bench_thread_yield();
		return;
	}
	struct timespec until = deadline_after(ticks);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

/* ------------------------------------------------------------ semaphores */

typedef struct {
	bool live;
	bool deleted;
	unsigned max;
	int waiters;
	sem_t sem;
	pthread_mutex_t lock; /* serialises the max-count check with the post */
} sem_slot_t;

static sem_slot_t sems[BENCH_MAX_SEMS];

static sem_slot_t *sem_of(int id)
{
	return (id >= 0 && id < BENCH_MAX_SEMS && sems[id].live) ? &sems[id] : NULL;
}

int bench_sem_create(int id, unsigned initial_count, unsigned max_count)
{
	if (id < 0 || id >= BENCH_MAX_SEMS || sems[id].live || max_count == 0 ||
	    initial_count > max_count || __atomic_load_n(&sems[id].waiters, __ATOMIC_SEQ_CST) != 0)
		return BENCH_ERROR;
	sem_slot_t *s = &sems[id];
	pthread_mutex_destroy(&s->lock);
	sem_destroy(&s->sem);
	pthread_mutex_init(&s->lock, NULL);
	sem_init(&s->sem, 0, initial_count);
	s->max = max_count;
	s->deleted = false;
	s->live = true;
	return BENCH_SUCCESS;
}

int bench_sem_delete(int id)
{
	sem_slot_t *s = sem_of(id);
	if (s == NULL)
		return BENCH_ERROR;
	pthread_mutex_lock(&s->lock);
	s->live = false;
	s->deleted = true;
	for (int n = __atomic_load_n(&s->waiters, __ATOMIC_SEQ_CST); n > 0; n--)
		sem_post(&s->sem); /* each waiter wakes and sees `deleted` */
	pthread_mutex_unlock(&s->lock);
	return BENCH_SUCCESS;
}

int bench_sem_give(int id)
{
	sem_slot_t *s = sem_of(id);
	if (s == NULL)
		return BENCH_ERROR;
	int value;
	int rc = BENCH_SUCCESS;
	pthread_mutex_lock(&s->lock);
	sem_getvalue(&s->sem, &value);
	if (value >= (int)s->max)
		rc = BENCH_FULL;
	else
		sem_post(&s->sem);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int bench_sem_give_from_isr(int id)
{
	return bench_sem_give(id); /* handlers run in threads */
}

static void leave_wait(void *waiters)
{
	__atomic_sub_fetch((int *)waiters, 1, __ATOMIC_SEQ_CST);
}

int bench_sem_take(int id, bench_ticks_t timeout)
{
	sem_slot_t *s = sem_of(id);
	if (s == NULL)
		return BENCH_ERROR;
	if (timeout == BENCH_NO_WAIT)
		return sem_trywait(&s->sem) == 0 ? BENCH_SUCCESS : BENCH_WOULD_BLOCK;
	struct timespec until = deadline_after(timeout);
	int rc;
	int err = 0;
	__atomic_add_fetch(&s->waiters, 1, __ATOMIC_SEQ_CST);
	pthread_cleanup_push(leave_wait, &s->waiters); /* also when deleted while waiting */
	do {
		rc = timeout == BENCH_FOREVER ? sem_wait(&s->sem)
					      : sem_clockwait(&s->sem, CLOCK_MONOTONIC, &until);
		err = errno;
	} while (rc != 0 && err == EINTR);
	pthread_cleanup_pop(1);
	if (s->deleted)
		return BENCH_DELETED;
	if (rc != 0)
		return err == ETIMEDOUT ? BENCH_TIMEOUT : BENCH_ERROR;
	return BENCH_SUCCESS;
}

/* ------------------------------------------------------------ mutexes */

typedef struct {
	bool live;
	pthread_mutex_t mutex;
} mutex_slot_t;

static mutex_slot_t mutexes[BENCH_MAX_MUTEXES];

static mutex_slot_t *mutex_of(int id)
{
	return (id >= 0 && id < BENCH_MAX_MUTEXES && mutexes[id].live) ? &mutexes[id] : NULL;
}

static void init_pi_mutex(pthread_mutex_t *m, int type)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
	pthread_mutexattr_settype(&attr, type);
	pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
}

int bench_mutex_create(int id)
{
	if (id < 0 || id >= BENCH_MAX_MUTEXES || mutexes[id].live)
		return BENCH_ERROR;
	init_pi_mutex(&mutexes[id].mutex, PTHREAD_MUTEX_RECURSIVE);
	mutexes[id].live = true;
	return BENCH_SUCCESS;
}

int bench_mutex_delete(int id)
{
	mutex_slot_t *m = mutex_of(id);
	if (m == NULL || pthread_mutex_destroy(&m->mutex) != 0)
		return BENCH_ERROR;
	m->live = false;
	return BENCH_SUCCESS;
}

int bench_mutex_lock(int id, bench_ticks_t timeout)
{
	mutex_slot_t *m = mutex_of(id);
	if (m == NULL)
		return BENCH_ERROR;
	int rc;
	if (timeout == BENCH_NO_WAIT) {
		rc = pthread_mutex_trylock(&m->mutex);
		return rc == 0 ? BENCH_SUCCESS : rc == EBUSY ? BENCH_WOULD_BLOCK : BENCH_ERROR;
	}
	if (timeout == BENCH_FOREVER) {
		rc = pthread_mutex_lock(&m->mutex);
	} else {
		struct timespec until = deadline_after(timeout);
		rc = pthread_mutex_clocklock(&m->mutex, CLOCK_MONOTONIC, &until);
	}
	return rc == 0 ? BENCH_SUCCESS : rc == ETIMEDOUT ? BENCH_TIMEOUT : BENCH_ERROR;
}

int bench_mutex_unlock(int id)
{
	mutex_slot_t *m = mutex_of(id);
	if (m == NULL)
		return BENCH_ERROR;
	return pthread_mutex_unlock(&m->mutex) == 0 ? BENCH_SUCCESS : BENCH_ERROR;
}

/* ------------------------------------------------------------ message queues */

typedef struct {
	bool live;
	bool deleted;
	uint8_t *buf;
	size_t msg_size;
	unsigned capacity;
	unsigned count;
	unsigned read_idx;
	int waiters;
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
} mq_slot_t;

static mq_slot_t mqs[BENCH_MAX_MSGQS];

static mq_slot_t *mq_of(int id)
{
	return (id >= 0 && id < BENCH_MAX_MSGQS && mqs[id].live) ? &mqs[id] : NULL;
}

int bench_mq_create(int id, size_t msg_size, unsigned capacity)
{
	if (id < 0 || id >= BENCH_MAX_MSGQS || mqs[id].live || msg_size == 0 || capacity == 0 ||
	    mqs[id].waiters != 0)
		return BENCH_ERROR;
	mq_slot_t *q = &mqs[id];
	free(q->buf);
	q->buf = malloc(msg_size * capacity);
	if (q->buf == NULL)
		return BENCH_ERROR;
	init_pi_mutex(&q->lock, PTHREAD_MUTEX_NORMAL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->not_empty, &ca);
	pthread_cond_init(&q->not_full, &ca);
	pthread_condattr_destroy(&ca);
	q->msg_size = msg_size;
	q->capacity = capacity;
	q->count = 0;
	q->read_idx = 0;
	q->deleted = false;
	q->live = true;
	return BENCH_SUCCESS;
}

int bench_mq_delete(int id)
{
	mq_slot_t *q = mq_of(id);
	if (q == NULL)
		return BENCH_ERROR;
	pthread_mutex_lock(&q->lock);
	q->live = false;
	q->deleted = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_cond_broadcast(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return BENCH_SUCCESS;
}

static void unlock_on_cancel(void *lock)
{
	pthread_mutex_unlock(lock);
}

/* Wait on cond while blocked(q); returns a BENCH_ code. Lock held. */
static int mq_wait(mq_slot_t *q, pthread_cond_t *cond, bool want_space, bench_ticks_t timeout)
{
	struct timespec until = deadline_after(timeout);
	int rc = 0;
	q->waiters++;
	pthread_cleanup_push(unlock_on_cancel, &q->lock);
	while (!q->deleted && rc == 0 &&
	       (want_space ? q->count == q->capacity : q->count == 0)) {
		if (timeout == BENCH_FOREVER)
			rc = pthread_cond_wait(cond, &q->lock);
		else
			rc = pthread_cond_clockwait(cond, &q->lock, CLOCK_MONOTONIC, &until);
	}
	pthread_cleanup_pop(0);
	q->waiters--;
	if (q->deleted)
		return BENCH_DELETED;
	if (want_space ? q->count < q->capacity : q->count > 0)
		return BENCH_SUCCESS; /* condition met, even if the wait also timed out */
	return rc == ETIMEDOUT ? BENCH_TIMEOUT : BENCH_ERROR;
}

int bench_mq_send(int id, const void *msg, bench_ticks_t timeout)
{
	mq_slot_t *q = mq_of(id);
	if (q == NULL)
		return BENCH_ERROR;
	pthread_mutex_lock(&q->lock);
	int rc = BENCH_SUCCESS;
	if (q->count == q->capacity)
		rc = timeout == BENCH_NO_WAIT ? BENCH_WOULD_BLOCK
					      : mq_wait(q, &q->not_full, true, timeout);
	if (rc == BENCH_SUCCESS) {
		unsigned slot = (q->read_idx + q->count) % q->capacity;
		memcpy(q->buf + slot * q->msg_size, msg, q->msg_size);
		q->count++;
		pthread_cond_signal(&q->not_empty);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int bench_mq_receive(int id, void *msg, bench_ticks_t timeout)
{
	mq_slot_t *q = mq_of(id);
	if (q == NULL)
		return BENCH_ERROR;
	pthread_mutex_lock(&q->lock);
	int rc = BENCH_SUCCESS;
	if (q->count == 0)
		rc = timeout == BENCH_NO_WAIT ? BENCH_WOULD_BLOCK
					      : mq_wait(q, &q->not_empty, false, timeout);
	if (rc == BENCH_SUCCESS) {
		memcpy(msg, q->buf + q->read_idx * q->msg_size, q->msg_size);
		q->read_idx = (q->read_idx + 1) % q->capacity;
		q->count--;
		pthread_cond_signal(&q->not_full);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

/* ------------------------------------------------------------ interrupts */

typedef struct {
	bench_isr_t handler;
	void *arg;
	volatile bool enabled;
	volatile bool pending; /* raised while disabled */
	int uio_fd;
#ifdef LATSCOPE_HAVE_GPIOD
	ls_gpiod_lines *gpio; /* rising-edge events, when LATSCOPE_IRQ<n>_GPIO */
#endif
	bool thread_started;
	pthread_t thread;
	sem_t soft; /* software raises */
} irq_line_t;

static irq_line_t lines[BENCH_IRQ_LINES];
static int line_native_prio[BENCH_IRQ_LINES]; /* 0: IRQ_NATIVE_PRIO */
static pthread_mutex_t irq_lock; /* the "interrupts masked" state */
static pthread_once_t irq_once = PTHREAD_ONCE_INIT;

static void init_irq_lock(void)
{
	init_pi_mutex(&irq_lock, PTHREAD_MUTEX_RECURSIVE);
}

/* Block until the line's next interrupt; false for a spurious wake-up. */
static bool wait_irq(irq_line_t *line)
{
#ifdef LATSCOPE_HAVE_GPIOD
	if (line->gpio != NULL)
		return ls_gpiod_wait_rising(line->gpio) == 1;
#endif
	if (line->uio_fd >= 0) {
		uint32_t count;
		return read(line->uio_fd, &count, sizeof(count)) == (ssize_t)sizeof(count);
	}
	return sem_wait(&line->soft) == 0;
}

static void *irq_thread(void *arg)
{
	irq_line_t *line = arg;
	for (;;) {
		if (!wait_irq(line))
			continue;
		if (!line->enabled) {
			line->pending = true;
			continue;
		}
		pthread_mutex_lock(&irq_lock);
		if (line->handler != NULL)
			line->handler(line->arg);
		pthread_mutex_unlock(&irq_lock);
	}
	return NULL;
}

/* LATSCOPE_IRQ<n>_GPIO=chip:offset (e.g. gpiochip0:17): rising edges of
 * that line through libgpiod (v1 or v2) edge events. 0 when unset or opened. */
static int open_gpio_irq(irq_line_t *line, int irq)
{
	char name[32];
	snprintf(name, sizeof(name), "LATSCOPE_IRQ%d_GPIO", irq);
	const char *spec = getenv(name);
	if (spec == NULL)
		return 0;
#ifdef LATSCOPE_HAVE_GPIOD
	char chip_name[64];
	unsigned offset;
	if (sscanf(spec, "%63[^:]:%u", chip_name, &offset) != 2) {
		fprintf(stderr, "linux: %s=%s: chip:line wanted\n", name, spec);
		return -1;
	}
	line->gpio = ls_gpiod_rising_edges(chip_name, offset, "latscope-irq");
	if (line->gpio == NULL) {
		fprintf(stderr, "linux: %s=%s (%s): %s\n", name, spec, ls_gpiod_api,
			strerror(errno));
		return -1;
	}
	return 0;
#else
	(void)line;
	fprintf(stderr, "linux: %s=%s: built without libgpiod (GPIOD=0)\n", name, spec);
	return -1;
#endif
}

int bench_irq_attach(int irq, bench_isr_t handler, void *arg)
{
	if (irq < 0 || irq >= BENCH_IRQ_LINES)
		return BENCH_ERROR;
	pthread_once(&irq_once, init_irq_lock);
	irq_line_t *line = &lines[irq];
	line->handler = handler;
	line->arg = arg;
	if (line->thread_started)
		return BENCH_SUCCESS;
	char name[32];
	snprintf(name, sizeof(name), "LATSCOPE_IRQ%d_UIO", irq);
	const char *dev = getenv(name);
	line->uio_fd = dev ? open(dev, O_RDWR) : -1;
	if (dev != NULL && line->uio_fd < 0) {
		fprintf(stderr, "linux: %s=%s: %s\n", name, dev, strerror(errno));
		return BENCH_ERROR;
	}
	if (open_gpio_irq(line, irq) != 0)
		return BENCH_ERROR;
	sem_init(&line->soft, 0, 0);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = EPERM;
	if (realtime) {
		struct sched_param sp = {.sched_priority = line_native_prio[irq] ? line_native_prio[irq]
									 : IRQ_NATIVE_PRIO};
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
		rc = pthread_create(&line->thread, &attr, irq_thread, line);
	}
	if (rc != 0) {
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		rc = pthread_create(&line->thread, &attr, irq_thread, line);
	}
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return BENCH_ERROR;
	line->thread_started = true;
	return BENCH_SUCCESS;
}

static void uio_write(irq_line_t *line, uint32_t value)
{
	if (line->uio_fd >= 0 && write(line->uio_fd, &value, sizeof(value)) < 0)
		perror("latscope: uio write");
}

int bench_irq_enable(int irq)
{
	if (irq < 0 || irq >= BENCH_IRQ_LINES)
		return BENCH_ERROR;
	irq_line_t *line = &lines[irq];
	line->enabled = true;
	uio_write(line, 1);
	if (line->pending && line->thread_started) {
		line->pending = false;
		sem_post(&line->soft);
	}
	return BENCH_SUCCESS;
}

int bench_irq_disable(int irq)
{
	if (irq < 0 || irq >= BENCH_IRQ_LINES)
		return BENCH_ERROR;
	lines[irq].enabled = false;
	uio_write(&lines[irq], 0);
	return BENCH_SUCCESS;
}

void bench_irq_ack(int irq)
{
	if (irq >= 0 && irq < BENCH_IRQ_LINES)
		uio_write(&lines[irq], 1); /* UIO: re-enable the interrupt */
}

void bench_port_raise_irq(int irq)
{
	if (irq >= 0 && irq < BENCH_IRQ_LINES && lines[irq].thread_started)
		sem_post(&lines[irq].soft);
}

int bench_linux_irq_priority(int irq, int native_prio)
{
	if (irq < 0 || irq >= BENCH_IRQ_LINES || native_prio < 1 || native_prio > 99)
		return BENCH_ERROR;
	line_native_prio[irq] = native_prio;
	if (lines[irq].thread_started && realtime) {
		struct sched_param sp = {.sched_priority = native_prio};
		if (pthread_setschedparam(lines[irq].thread, SCHED_FIFO, &sp) != 0)
			return BENCH_ERROR;
	}
	return BENCH_SUCCESS;
}

typedef struct {
	int irq;
	long period_ns;
} raiser_t;

static void *raise_periodically(void *arg)
{
	raiser_t raiser = *(raiser_t *)arg;
	free(arg);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		next.tv_nsec += raiser.period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		bench_port_raise_irq(raiser.irq);
	}
	return NULL;
}

int bench_linux_raise_every(int irq, long period_ns, int native_prio)
{
	raiser_t *raiser = malloc(sizeof(*raiser));
	if (raiser == NULL || period_ns <= 0 || irq < 0 || irq >= BENCH_IRQ_LINES) {
		free(raiser);
		return BENCH_ERROR;
	}
	*raiser = (raiser_t){irq, period_ns};
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	struct sched_param sp = {.sched_priority = native_prio};
	pthread_t thread;
	int rc = EPERM;
	if (native_prio > 0 && realtime) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
		rc = pthread_create(&thread, &attr, raise_periodically, raiser);
	}
	if (rc != 0) {
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		rc = pthread_create(&thread, &attr, raise_periodically, raiser);
	}
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		free(raiser);
		return BENCH_ERROR;
	}
	return BENCH_SUCCESS;
}

unsigned bench_irq_lock(void)
{
	pthread_once(&irq_once, init_irq_lock);
	pthread_mutex_lock(&irq_lock);
	return 0;
}

void bench_irq_unlock(unsigned key)
{
	(void)key;
	pthread_mutex_unlock(&irq_lock);
}

/* ------------------------------------------------------------ time */

uint32_t bench_tick_period_ns(void)
{
	return BENCH_LINUX_TICK_NS;
}

bench_ticks_t bench_tick_count(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t ns = (uint64_t)(now.tv_sec - start_time.tv_sec) * 1000000000u +
		      (uint64_t)now.tv_nsec - (uint64_t)start_time.tv_nsec;
	return (bench_ticks_t)(ns / BENCH_LINUX_TICK_NS);
}

bench_cycles_t bench_cycles(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (bench_cycles_t)((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
}

uint32_t bench_cycles_per_second(void)
{
	return 1000000000u;
}

/* ------------------------------------------------------------ start-up */

/* The highest CPU of /sys/devices/system/cpu/isolated (a list like "3" or "2-3"), -1 if
 * none: the CPU the docs' isolcpus= set-up keeps for the suite. */
static int last_isolated_cpu(void)
{
	char text[256] = "";
	FILE *file = fopen("/sys/devices/system/cpu/isolated", "r");
	if (file == NULL)
		return -1;
	size_t n = fread(text, 1, sizeof(text) - 1, file);
	fclose(file);
	text[n] = '\0';
	int cpu = -1;
	for (char *p = text; *p != '\0';) { /* ascending: the last number is the highest */
		char *end;
		long value = strtol(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		cpu = (int)value;
		p = end;
	}
	return cpu;
}

/* Without LATSCOPE_CPU: the last isolated CPU, else the last this process may use. The
 * suite needs one CPU: a more urgent thread it creates must preempt its creator, not run
 * beside it on another CPU (then the creator goes on and finds the thread's id in use). */
static long default_cpu(const char **why)
{
	long cpu = last_isolated_cpu();
	if (cpu >= 0) {
		*why = "the last isolated CPU (/sys/devices/system/cpu/isolated)";
		return cpu;
	}
	cpu_set_t allowed;
	*why = "the last CPU this process may run on";
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		for (cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
			if (CPU_ISSET((int)cpu, &allowed))
				return cpu;
	return 0;
}

/* LATSCOPE_CPU=n (default: default_cpu): this thread, and every thread it creates, on CPU n. */
static int pin_to_cpu(void)
{
	const char *text = getenv("LATSCOPE_CPU");
	const char *why = "LATSCOPE_CPU";
	char *end = "";
	long cpu = text != NULL ? strtol(text, &end, 10) : default_cpu(&why);
	cpu_set_t set;
	CPU_ZERO(&set);
	bool valid = *end == '\0' && end != text && cpu >= 0 && cpu < CPU_SETSIZE;
	if (valid)
		CPU_SET((int)cpu, &set);
	else
		errno = EINVAL;
	if (!valid || sched_setaffinity(0, sizeof(set), &set) != 0) {
		char label[32];
		if (text != NULL)
			snprintf(label, sizeof(label), "%.20s", text);
		else
			snprintf(label, sizeof(label), "%ld", cpu);
		fprintf(stderr, "linux: CPU %s (%s): %s; the suite's threads need one CPU (set "
				"LATSCOPE_CPU=n to one this process may use)\n",
			label, why, strerror(errno));
		return -1;
	}
	if (text == NULL)
		printf("linux: LATSCOPE_CPU unset: every thread on CPU %ld, %s\n", cpu, why);
	return 0;
}

int bench_run(int prio, bench_thread_entry_t entry, void *arg)
{
	if (!valid_prio(prio) || entry == NULL)
		return BENCH_ERROR;
	clock_gettime(CLOCK_MONOTONIC, &start_time);
	/* Give every slot's synchronisation objects a valid initial state, so
	 * create can always destroy-then-init. */
	for (int i = 0; i <= BENCH_MAX_THREADS; i++) {
		sem_init(&threads[i].parked, 0, 0);
		sem_init(&threads[i].exited, 0, 0);
	}
	for (int i = 0; i < BENCH_MAX_SEMS; i++) {
		pthread_mutex_init(&sems[i].lock, NULL);
		sem_init(&sems[i].sem, 0, 0);
	}
	install_signal_handlers();
	pthread_once(&irq_once, init_irq_lock);
	if (pin_to_cpu() != 0)
		return BENCH_ERROR;
	(void)mlockall(MCL_CURRENT | MCL_FUTURE); /* best effort: no page faults later */
	if (create_slot(BENCH_THREAD_MAIN, prio, MIN_STACK, entry, arg, false) != BENCH_SUCCESS)
		return BENCH_ERROR;
	pthread_join(threads[BENCH_THREAD_MAIN].handle, NULL);
	return BENCH_SUCCESS;
}

void bench_exit(int code)
{
	fflush(stdout);
	/* An interrupt line's handler thread may be inside a marker: a marker's two GPIO
	 * stores are made under the interrupt lock, so exiting with the lock held never ends
	 * the process between them (half a marker on the pins: data without its strobe). */
	(void)bench_irq_lock();
	exit(code);
}

void bench_console_write(const char *s)
{
	fputs(s, stdout);
	fflush(stdout);
}
