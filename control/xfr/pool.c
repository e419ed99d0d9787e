/* Transfer threads; see pool.h. */
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "control/xfr/pool.h"

static void *worker(void *arg)
{
	struct p53_xfr_pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->todo == NULL)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		struct p53_xfr_job *j = p->todo;
		p->todo = j->next;
		if (p->todo == NULL)
			p->todo_tail = NULL;
		p->queued--;
		p->running++;
		pthread_mutex_unlock(&p->mu);

		j->next = NULL;
		j->stop = &p->stop;
		p53_xfr_job_run(j);

		pthread_mutex_lock(&p->mu);
		p->running--;
		if (p->done_tail != NULL)
			p->done_tail->next = j;
		else
			p->done = j;
		p->done_tail = j;
		/* The control thread sleeps in poll() up to its tick: wake it for the result
		 * (an IXFR's NOTIFY-to-served would otherwise wait for the tick). */
		if (p->wake_fd >= 0) {
			uint64_t one = 1;
			if (write(p->wake_fd, &one, sizeof(one)) < 0) {
				/* counter full (never at these rates): the tick still comes */
			}
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int p53_xfr_pool_start(struct p53_xfr_pool *p, unsigned int n)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n > P53_XFR_MAX_THREADS)
		n = P53_XFR_MAX_THREADS;
	for (unsigned int i = 0; i < n; i++) {
		if (pthread_create(&p->th[i], NULL, worker, p) != 0) {
			p53_xfr_pool_stop(p);
			return -1;
		}
		char name[16];
		snprintf(name, sizeof(name), "p53-xfr-%u", i);
		pthread_setname_np(p->th[i], name);
		p->n++;
	}
	return 0;
}

void p53_xfr_pool_submit(struct p53_xfr_pool *p, struct p53_xfr_job *j, bool urgent)
{
	pthread_mutex_lock(&p->mu);
	if (urgent) {
		j->next = p->todo;
		p->todo = j;
		if (p->todo_tail == NULL)
			p->todo_tail = j;
	} else {
		j->next = NULL;
		if (p->todo_tail != NULL)
			p->todo_tail->next = j;
		else
			p->todo = j;
		p->todo_tail = j;
	}
	p->queued++;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

struct p53_xfr_job *p53_xfr_pool_done(struct p53_xfr_pool *p)
{
	struct p53_xfr_job *j;

	pthread_mutex_lock(&p->mu);
	j = p->done;
	if (j != NULL) {
		p->done = j->next;
		if (p->done == NULL)
			p->done_tail = NULL;
		j->next = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	return j;
}

void p53_xfr_pool_stop(struct p53_xfr_pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (unsigned int i = 0; i < p->n; i++)
		pthread_join(p->th[i], NULL);
	p->n = 0;
	for (int list = 0; list < 2; list++) {
		struct p53_xfr_job *j = list == 0 ? p->todo : p->done;
		while (j != NULL) {
			struct p53_xfr_job *next = j->next;
			p53_xfr_job_free(j);
			j = next;
		}
	}
	p->todo = p->todo_tail = p->done = p->done_tail = NULL;
	p->queued = 0;
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	p->wake_fd = -1;
}
