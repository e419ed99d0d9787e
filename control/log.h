/*
 * Logging for the control thread and start-up: one line per event to stderr, with a UTC
 * timestamp and a level, so systemd's journal and the test scripts read the same thing.
 * Not for worker lcores (it formats and writes: a syscall).
 */
#ifndef P53_LOG_H
#define P53_LOG_H

enum p53_log_level { P53_LOG_ERR = 0, P53_LOG_WARN, P53_LOG_INFO, P53_LOG_DEBUG };

/** Messages above this level are not written; default P53_LOG_INFO. */
void p53_log_set_level(enum p53_log_level level);

void p53_log(enum p53_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** A compiler warning callback (p53_warn_fn) that logs at warning level; arg unused. */
void p53_log_warn_cb(void *arg, const char *msg);

#define p53_err(...)  p53_log(P53_LOG_ERR, __VA_ARGS__)
#define p53_warn(...) p53_log(P53_LOG_WARN, __VA_ARGS__)
#define p53_info(...) p53_log(P53_LOG_INFO, __VA_ARGS__)

#endif /* P53_LOG_H */
