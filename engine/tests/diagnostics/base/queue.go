package queue

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrClosed is returned when the queue no longer accepts jobs.
var ErrClosed = errors.New("queue closed")

// Job is one unit of work.
type Job struct {
	ID       string
	Payload  []byte
	Attempts int
}

// Queue runs jobs on a fixed pool of workers.
type Queue struct {
	mu      sync.Mutex
	jobs    chan Job
	closed  bool
	wg      sync.WaitGroup
	handler func(context.Context, Job) error
}

// New starts a queue with n workers.
func New(n int, handler func(context.Context, Job) error) *Queue {
	q := &Queue{jobs: make(chan Job, 64), handler: handler}
	for i := 0; i < n; i++ {
		q.wg.Add(1)
		go q.worker()
	}
	return q
}

// Push enqueues a job.
func (q *Queue) Push(j Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.jobs <- j
	return nil
}

func (q *Queue) worker() {
	defer q.wg.Done()
	for j := range q.jobs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := q.handler(ctx, j)
		cancel()
		if err != nil && j.Attempts < 3 {
			j.Attempts++
			_ = q.Push(j)
		}
	}
}

// Close stops accepting jobs and waits for the workers.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	close(q.jobs)
	q.mu.Unlock()
	q.wg.Wait()
}
