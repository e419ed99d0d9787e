/*
 * The record of libxdp's program a dpdk-mode run attached (control/net/xdp_owner.c): where it
 * lives, and when an earlier run's record lets the next run detach the program. Records that
 * must not let it are a table, one row per case with what it guards against.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "control/net/xdp_owner.h"

static void test_path(void **state)
{
	(void)state;
	char p[64];

	assert_int_equal(p53_xdp_owner_path(p, sizeof(p), "/run/pop53/control.sock", "p53p"), 0);
	assert_string_equal(p, "/run/pop53/xdp-p53p.owner");
	assert_int_equal(p53_xdp_owner_path(p, sizeof(p), "/ctl.sock", "eth0"), 0);
	assert_string_equal(p, "/xdp-eth0.owner");
	assert_int_equal(p53_xdp_owner_path(p, sizeof(p), "ctl.sock", "eth0"), 0);
	assert_string_equal(p, "./xdp-eth0.owner");
	assert_int_equal(p53_xdp_owner_path(p, 16, "/run/pop53/control.sock", "p53p"), -ENAMETOOLONG);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A pid that runs no process: fork a child that exits at once and reap it. */
static long dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	waitpid(pid, NULL, 0);
	return (long)pid;
}

static void test_left_by_dead_run(void **state)
{
	(void)state;
	char path[] = "/tmp/p53-xdp-owner-XXXXXX", text[64];
	uint32_t id = 99;
	long pid = 99;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	long dead = dead_pid();
	snprintf(text, sizeof(text), "prog 812 pid %ld\n", dead);
	write_file(path, text);
	assert_int_equal(p53_xdp_owner_left(path, &id, &pid), 0);
	assert_int_equal(id, 812);
	assert_int_equal(pid, dead);
	/* Our own pid (a record this process wrote) is not "another pop53d". */
	snprintf(text, sizeof(text), "prog 813 pid %ld\n", (long)getpid());
	write_file(path, text);
	assert_int_equal(p53_xdp_owner_left(path, &id, &pid), 0);
	assert_int_equal(id, 813);
	unlink(path);
	/* No record: nothing to detach. */
	assert_int_equal(p53_xdp_owner_left(path, &id, &pid), 0);
	assert_int_equal(id, 0);
	p53_xdp_owner_remove(path); /* missing is fine */
}

extern char **environ;

/* A running process whose name (comm) is the file name of exe. */
static pid_t run_as(const char *exe)
{
	char *argv[] = { (char *)exe, "10", NULL };
	pid_t pid;

	assert_int_equal(posix_spawn(&pid, exe, NULL, NULL, argv, environ), 0);
	usleep(100000); /* until exec is done and comm is the new name */
	return pid;
}

static void test_left_by_running(void **state)
{
	(void)state;
	char dir[] = "/tmp/p53-xdp-owner-XXXXXX", exe[128], path[128], text[64], cmd[300];
	uint32_t id;
	long pid;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/xdp-p53p.owner", dir);
	/* The recorded pid runs pop53d: another instance owns the interface. */
	snprintf(exe, sizeof(exe), "%s/pop53d", dir);
	snprintf(cmd, sizeof(cmd), "cp /bin/sleep %s", exe);
	assert_int_equal(system(cmd), 0);
	pid_t p = run_as(exe);
	snprintf(text, sizeof(text), "prog 812 pid %ld\n", (long)p);
	write_file(path, text);
	assert_int_equal(p53_xdp_owner_left(path, &id, &pid), -EBUSY);
	assert_int_equal(id, 0);
	assert_int_equal(pid, p);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	/* The pid reused by another program: the record's program is ours to detach. */
	p = run_as("/bin/sleep");
	snprintf(text, sizeof(text), "prog 812 pid %ld\n", (long)p);
	write_file(path, text);
	assert_int_equal(p53_xdp_owner_left(path, &id, &pid), 0);
	assert_int_equal(id, 812);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static const struct {
	const char *text;
	int ret;
	const char *why;
} refused[] = {
	{ "", -EINVAL, "an empty record names no program" },
	{ "prog 0 pid 12\n", -EINVAL, "program id 0 is no program" },
	{ "prog x pid 12\n", -EINVAL, "a program id that is not a number" },
	{ "prog 812\n", -EINVAL, "a record without its pid" },
	{ "pid 12 prog 812\n", -EINVAL, "fields in another order: not our format" },
};

static void test_left_refused(void **state)
{
	(void)state;
	char path[] = "/tmp/p53-xdp-owner-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		uint32_t id = 99;
		long pid;
		write_file(path, refused[i].text);
		int ret = p53_xdp_owner_left(path, &id, &pid);
		if (ret != refused[i].ret || id != 0)
			fail_msg("row %zu (%s): ret %d id %u, want %d and id 0", i, refused[i].why, ret,
				 id, refused[i].ret);
	}
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_left_by_dead_run),
		cmocka_unit_test(test_left_by_running),
		cmocka_unit_test(test_left_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
