#include <stdlib.h>
#include <string.h>
#include "ringbuf.h"

/* A byte ring buffer with a power-of-two capacity. */
struct ringbuf {
    unsigned char *data;
    size_t cap;   /* always a power of two */
    size_t head;  /* next byte to read */
    size_t tail;  /* next byte to write */
};

static size_t next_pow2(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

struct ringbuf *ringbuf_new(size_t min_cap)
{
    struct ringbuf *rb = malloc(sizeof *rb);
    if (rb == NULL)
        return NULL;
    rb->cap = next_pow2(min_cap);
    rb->data = malloc(rb->cap);
    if (rb->data == NULL) {
        free(rb);
        return NULL;
    }
    rb->head = rb->tail = 0;
    return rb;
}

size_t ringbuf_used(const struct ringbuf *rb)
{
    return rb->tail - rb->head;
}

size_t ringbuf_write(struct ringbuf *rb, const void *src, size_t len)
{
    size_t room = rb->cap - ringbuf_used(rb);
    if (len > room)
        len = room;
    for (size_t i = 0; i < len; i++)
        rb->data[(rb->tail + i) & (rb->cap - 1)] = ((const unsigned char *)src)[i];
    rb->tail += len;
    return len;
}

size_t ringbuf_read(struct ringbuf *rb, void *dst, size_t len)
{
    size_t used = ringbuf_used(rb);
    if (len > used)
        len = used;
    for (size_t i = 0; i < len; i++)
        ((unsigned char *)dst)[i] = rb->data[(rb->head + i) & (rb->cap - 1)];
    rb->head += len;
    return len;
}

void ringbuf_free(struct ringbuf *rb)
{
    if (rb == NULL)
        return;
    free(rb->data);
    free(rb);
}
