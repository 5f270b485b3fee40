/*
 * The porting layer (latscope/bench_api.h) on the reference kernel; shared
 * by the host and sim ports, whose bench_port.h sets the sizes.
 *
 * Memory: object tables indexed by id. Thread stacks and message-queue
 * buffers come from two static arenas and stay bound to their id after the
 * object is deleted, so create/delete cycles on the same id (the TF and SEO
 * tests) reuse memory without an allocator, and a thread that deletes itself
 * never has its stack handed out while it is still switching away.
 */
#include <string.h>

#include "latscope/bench_api.h"
#include "kernel/board.h"
#include "kernel/kernel.h"

#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((size_t)(a) - 1))

/* A port may place memory that needs no zeroing at start-up apart. */
#ifndef K_ARCH_NOINIT
#define K_ARCH_NOINIT
#endif

typedef struct {
	uint8_t *base;
	size_t size;
} binding_t;

typedef struct {
	uint8_t *mem;
	size_t size;
	size_t used;
} arena_t;

/* Stacks are written before they are used (arch_context_init): not zeroed. */
static uint8_t stack_mem[BENCH_STACK_ARENA_BYTES] K_ARCH_NOINIT
	__attribute__((aligned(K_ARCH_STACK_ALIGN)));
static uint8_t mq_mem[BENCH_MQ_ARENA_BYTES] __attribute__((aligned(8)));
static arena_t stack_arena = {stack_mem, sizeof(stack_mem), 0};
static arena_t mq_arena = {mq_mem, sizeof(mq_mem), 0};

static k_thread_t threads[BENCH_MAX_THREADS + 1]; /* + BENCH_THREAD_MAIN */
static binding_t thread_stacks[BENCH_MAX_THREADS + 1];
static k_sem_t sems[BENCH_MAX_SEMS];
static bool sem_live[BENCH_MAX_SEMS];
static k_mutex_t mutexes[BENCH_MAX_MUTEXES];
static bool mutex_live[BENCH_MAX_MUTEXES];
static k_msgq_t msgqs[BENCH_MAX_MSGQS];
static binding_t msgq_bufs[BENCH_MAX_MSGQS];
static bool msgq_live[BENCH_MAX_MSGQS];

static bench_thread_entry_t main_entry;
static void *main_arg;

/* Memory bound to an id: reused when big enough, else a fresh block. */
static uint8_t *bind(binding_t *b, arena_t *a, size_t size, size_t align)
{
	if (b->base != NULL && b->size >= size)
		return b->base;
	size_t start = ALIGN_UP(a->used, align);
	if (start + size > a->size)
		return NULL;
	a->used = start + size;
	b->base = a->mem + start;
	b->size = size;
	return b->base;
}

static int from_k(int rc)
{
	switch (rc) {
	case K_OK: return BENCH_SUCCESS;
	case K_EAGAIN: return BENCH_WOULD_BLOCK;
	case K_ETIMEDOUT: return BENCH_TIMEOUT;
	case K_EDELETED: return BENCH_DELETED;
	case K_EOVERFLOW: return BENCH_FULL;
	default: return BENCH_ERROR;
	}
}

static bool valid_prio(int prio)
{
	return prio >= 0 && prio < BENCH_PRIO_COUNT;
}

/* Thread id 0 .. BENCH_MAX_THREADS (the last one is BENCH_THREAD_MAIN). */
static k_thread_t *thread_of(int id)
{
	if (id < 0 || id > BENCH_MAX_THREADS || !k_thread_alive(&threads[id]))
		return NULL;
	return &threads[id];
}

/* ------------------------------------------------------------ start-up */

static void main_wrapper(void *unused)
{
	(void)unused;
	main_entry(main_arg);
	board_exit(0);
}

int bench_run(int prio, bench_thread_entry_t entry, void *arg)
{
	if (!valid_prio(prio) || entry == NULL)
		return BENCH_ERROR;
	k_init();
	memset(threads, 0, sizeof(threads));
	memset(sem_live, 0, sizeof(sem_live));
	memset(mutex_live, 0, sizeof(mutex_live));
	memset(msgq_live, 0, sizeof(msgq_live));
	main_entry = entry;
	main_arg = arg;
	size_t size = ALIGN_UP(BENCH_MAIN_STACK_BYTES, K_ARCH_STACK_ALIGN);
	uint8_t *stack = bind(&thread_stacks[BENCH_THREAD_MAIN], &stack_arena, size,
			      K_ARCH_STACK_ALIGN);
	if (stack == NULL ||
	    k_thread_create(&threads[BENCH_THREAD_MAIN], "main", (uint8_t)prio, stack, size,
			    main_wrapper, NULL) != K_OK)
		return BENCH_ERROR;
	board_tick_start();
	k_start();
	return board_exit_code() == 0 ? BENCH_SUCCESS : BENCH_ERROR;
}

void bench_exit(int code)
{
	board_exit(code);
}

void bench_console_write(const char *s)
{
	board_console_write(s);
}

/* ------------------------------------------------------------ threads */

int bench_thread_create(int id, const char *name, int prio, size_t stack_size,
			bench_thread_entry_t entry, void *arg)
{
	if (id < 0 || id >= BENCH_MAX_THREADS || !valid_prio(prio) || entry == NULL)
		return BENCH_ERROR;
	if (stack_size < K_ARCH_MIN_STACK_SIZE)
		stack_size = K_ARCH_MIN_STACK_SIZE;
	stack_size = ALIGN_UP(stack_size, K_ARCH_STACK_ALIGN);
	/* k_thread_create() re-checks liveness under its own lock; this one
	 * keeps two creators from binding memory at the same time. */
	unsigned key = arch_irq_lock();
	uint8_t *stack = k_thread_alive(&threads[id])
				 ? NULL
				 : bind(&thread_stacks[id], &stack_arena, stack_size, K_ARCH_STACK_ALIGN);
	arch_irq_unlock(key);
	if (stack == NULL)
		return BENCH_ERROR;
	return from_k(k_thread_create(&threads[id], name, (uint8_t)prio, stack,
				      thread_stacks[id].size, entry, arg));
}

int bench_thread_delete(int id)
{
	k_thread_t *t = thread_of(id);
	return t ? from_k(k_thread_delete(t)) : BENCH_ERROR;
}

int bench_thread_self(void)
{
	k_thread_t *self = k_thread_self();
	if (self < &threads[0] || self > &threads[BENCH_MAX_THREADS])
		return -1;
	return (int)(self - threads);
}

void bench_thread_yield(void)
{
	k_yield();
}

int bench_thread_set_priority(int id, int prio)
{
	k_thread_t *t = thread_of(id);
	if (t == NULL || !valid_prio(prio))
		return BENCH_ERROR;
	return from_k(k_thread_priority_set(t, (uint8_t)prio));
}

int bench_thread_get_priority(int id)
{
	k_thread_t *t = thread_of(id);
	return t ? k_thread_base_priority_get(t) : -1;
}

int bench_thread_suspend(int id)
{
	k_thread_t *t = thread_of(id);
	return t ? from_k(k_thread_suspend(t)) : BENCH_ERROR;
}

int bench_thread_resume(int id)
{
	k_thread_t *t = thread_of(id);
	return t ? from_k(k_thread_resume(t)) : BENCH_ERROR;
}

void bench_sleep(bench_ticks_t ticks)
{
	k_sleep(ticks);
}

/* ------------------------------------------------------------ semaphores */

static k_sem_t *sem_of(int id)
{
	return (id >= 0 && id < BENCH_MAX_SEMS && sem_live[id]) ? &sems[id] : NULL;
}

int bench_sem_create(int id, unsigned initial_count, unsigned max_count)
{
	if (id < 0 || id >= BENCH_MAX_SEMS)
		return BENCH_ERROR;
	unsigned key = arch_irq_lock();
	int rc = BENCH_ERROR;
	if (!sem_live[id] && k_sem_init(&sems[id], initial_count, max_count) == K_OK) {
		sem_live[id] = true;
		rc = BENCH_SUCCESS;
	}
	arch_irq_unlock(key);
	return rc;
}

int bench_sem_delete(int id)
{
	/* Under the lock, so the id cannot be created again before the
	 * waiters are released (the delete may switch to one of them). */
	unsigned key = arch_irq_lock();
	k_sem_t *s = sem_of(id);
	int rc = BENCH_ERROR;
	if (s != NULL) {
		sem_live[id] = false;
		rc = from_k(k_sem_delete(s));
	}
	arch_irq_unlock(key);
	return rc;
}

int bench_sem_give(int id)
{
	k_sem_t *s = sem_of(id);
	return s ? from_k(k_sem_give(s)) : BENCH_ERROR;
}

K_IRQ_PATH(bench_sem_give_from_isr) int bench_sem_give_from_isr(int id)
{
	return bench_sem_give(id); /* the kernel's give is ISR-safe */
}

int bench_sem_take(int id, bench_ticks_t timeout)
{
	k_sem_t *s = sem_of(id);
	return s ? from_k(k_sem_take(s, timeout)) : BENCH_ERROR;
}

/* ------------------------------------------------------------ mutexes */

static k_mutex_t *mutex_of(int id)
{
	return (id >= 0 && id < BENCH_MAX_MUTEXES && mutex_live[id]) ? &mutexes[id] : NULL;
}

int bench_mutex_create(int id)
{
	if (id < 0 || id >= BENCH_MAX_MUTEXES)
		return BENCH_ERROR;
	unsigned key = arch_irq_lock();
	int rc = BENCH_ERROR;
	if (!mutex_live[id]) {
		k_mutex_init(&mutexes[id]);
		mutex_live[id] = true;
		rc = BENCH_SUCCESS;
	}
	arch_irq_unlock(key);
	return rc;
}

int bench_mutex_delete(int id)
{
	/* Under the lock, so the id cannot be created again before the
	 * waiters are released (the delete may switch to one of them). */
	unsigned key = arch_irq_lock();
	k_mutex_t *m = mutex_of(id);
	int rc = BENCH_ERROR;
	if (m != NULL) {
		mutex_live[id] = false;
		rc = from_k(k_mutex_delete(m));
	}
	arch_irq_unlock(key);
	return rc;
}

int bench_mutex_lock(int id, bench_ticks_t timeout)
{
	k_mutex_t *m = mutex_of(id);
	return m ? from_k(k_mutex_lock(m, timeout)) : BENCH_ERROR;
}

int bench_mutex_unlock(int id)
{
	k_mutex_t *m = mutex_of(id);
	return m ? from_k(k_mutex_unlock(m)) : BENCH_ERROR;
}

/* ------------------------------------------------------------ message queues */

static k_msgq_t *msgq_of(int id)
{
	return (id >= 0 && id < BENCH_MAX_MSGQS && msgq_live[id]) ? &msgqs[id] : NULL;
}

int bench_mq_create(int id, size_t msg_size, unsigned capacity)
{
	if (id < 0 || id >= BENCH_MAX_MSGQS || msg_size == 0)
		return BENCH_ERROR;
	size_t bytes = msg_size * capacity;
	unsigned key = arch_irq_lock();
	int rc = BENCH_ERROR;
	uint8_t *buf = NULL;
	if (!msgq_live[id] && (bytes == 0 || (buf = bind(&msgq_bufs[id], &mq_arena, bytes, 8)) != NULL) &&
	    k_msgq_init(&msgqs[id], buf, (uint32_t)msg_size, capacity) == K_OK) {
		msgq_live[id] = true;
		rc = BENCH_SUCCESS;
	}
	arch_irq_unlock(key);
	return rc;
}

int bench_mq_delete(int id)
{
	/* Under the lock, so the id cannot be created again before the
	 * waiters are released (the delete may switch to one of them). */
	unsigned key = arch_irq_lock();
	k_msgq_t *q = msgq_of(id);
	int rc = BENCH_ERROR;
	if (q != NULL) {
		msgq_live[id] = false;
		rc = from_k(k_msgq_delete(q));
	}
	arch_irq_unlock(key);
	return rc;
}

int bench_mq_send(int id, const void *msg, bench_ticks_t timeout)
{
	k_msgq_t *q = msgq_of(id);
	return q ? from_k(k_msgq_send(q, msg, timeout)) : BENCH_ERROR;
}

int bench_mq_receive(int id, void *msg, bench_ticks_t timeout)
{
	k_msgq_t *q = msgq_of(id);
	return q ? from_k(k_msgq_receive(q, msg, timeout)) : BENCH_ERROR;
}

/* ------------------------------------------------------------ interrupts */

static bool valid_irq(int irq)
{
	return irq >= 0 && irq < BENCH_IRQ_LINES;
}

int bench_irq_attach(int irq, bench_isr_t handler, void *arg)
{
	return valid_irq(irq) ? from_k(k_irq_attach((unsigned)irq, handler, arg)) : BENCH_ERROR;
}

int bench_irq_enable(int irq)
{
	if (!valid_irq(irq))
		return BENCH_ERROR;
	board_irq_line_enable((unsigned)irq, true);
	return BENCH_SUCCESS;
}

int bench_irq_disable(int irq)
{
	if (!valid_irq(irq))
		return BENCH_ERROR;
	board_irq_line_enable((unsigned)irq, false);
	return BENCH_SUCCESS;
}

K_IRQ_PATH(bench_irq_ack) void bench_irq_ack(int irq)
{
	if (valid_irq(irq))
		board_irq_line_ack((unsigned)irq);
}

unsigned bench_irq_lock(void)
{
	return arch_irq_lock();
}

void bench_irq_unlock(unsigned key)
{
	arch_irq_unlock(key);
}

/* ------------------------------------------------------------ time */

uint32_t bench_tick_period_ns(void)
{
	return board_tick_period_ns();
}

bench_ticks_t bench_tick_count(void)
{
	return k_tick_get();
}

bench_cycles_t bench_cycles(void)
{
	return board_cycles();
}

uint32_t bench_cycles_per_second(void)
{
	return board_cycles_per_second();
}
