/*
 * Intrusive circular doubly-linked list used by every kernel queue.
 *
 * A list head is a k_dnode_t whose next/prev point to itself when empty.
 * A node that is on no list has next == NULL (k_dnode_linked() tells),
 * which lets the kernel ask "is this thread on the timeout list?" in O(1).
 * All operations are O(1); none of them allocate.
 */
#ifndef KERNEL_LIST_H
#define KERNEL_LIST_H

#include <stddef.h>
#include <stdbool.h>

typedef struct k_dnode {
	struct k_dnode *next;
	struct k_dnode *prev;
} k_dnode_t;

#define K_CONTAINER_OF(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void k_dlist_init(k_dnode_t *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool k_dlist_empty(const k_dnode_t *head)
{
	return head->next == head;
}

static inline bool k_dnode_linked(const k_dnode_t *node)
{
	return node->next != NULL;
}

/* Insert node between two adjacent nodes a -> b. */
static inline void k_dlist_insert_between(k_dnode_t *node, k_dnode_t *a, k_dnode_t *b)
{
	node->prev = a;
	node->next = b;
	a->next = node;
	b->prev = node;
}

static inline void k_dlist_append(k_dnode_t *head, k_dnode_t *node)
{
	k_dlist_insert_between(node, head->prev, head);
}

static inline void k_dlist_prepend(k_dnode_t *head, k_dnode_t *node)
{
	k_dlist_insert_between(node, head, head->next);
}

/* Insert node right after an existing node (which may be the head). */
static inline void k_dlist_insert_after(k_dnode_t *where, k_dnode_t *node)
{
	k_dlist_insert_between(node, where, where->next);
}

static inline void k_dlist_remove(k_dnode_t *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	node->next = NULL;
	node->prev = NULL;
}

/* First node or NULL when empty. */
static inline k_dnode_t *k_dlist_first(const k_dnode_t *head)
{
	return k_dlist_empty(head) ? NULL : head->next;
}

/* True when the list holds exactly one node. */
static inline bool k_dlist_single(const k_dnode_t *head)
{
	return !k_dlist_empty(head) && head->next == head->prev;
}

#define K_DLIST_FOR_EACH(head, node) \
	for ((node) = (head)->next; (node) != (head); (node) = (node)->next)

#endif /* KERNEL_LIST_H */
