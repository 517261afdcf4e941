/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs the unit tests: `matcha_tests [-j N] [substring]` runs the tests whose name contains
 * the substring, in N processes at once (default 1) that each take the next test not yet
 * taken. The seed of the randomized tests comes from MATCHA_SEED, else the clock, and is
 * printed first; a test's random stream depends on its name only, so any N repeats a run.
 * The last line is "<N> passed, <M> failed".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#define PRINTED_FAILURES 10

struct test {
	const char *name;
	void (*fn)(void);
};

#define TEST_ENTRY(name) { #name, test_##name },
static const struct test tests[] = { MATCHA_TESTS(TEST_ENTRY) };

static uint64_t run_seed;
static const char *running;
static unsigned failures;

void check_fail(const char *file, int line, const char *fmt, ...)
{
	if (failures++ >= PRINTED_FAILURES)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "  %s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

unsigned check_failures(void) { return failures; }

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint32_t rng_below(struct rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

void rng_bytes(struct rng *r, uint8_t *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)rng_next(r);
}

struct rng rng_for_test(void)
{
	/* FNV-1a of the name: each test its own stream, independent of the run order. */
	uint64_t h = 0xCBF29CE484222325ull;
	for (const char *c = running; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001B3ull;
	return (struct rng){ run_seed ^ h };
}

struct tally {
	unsigned passed, failed;
};

static void run_test(size_t i, struct tally *t)
{
	running = tests[i].name;
	failures = 0;
	clock_t start = clock();
	tests[i].fn();
	double ms = 1000.0 * (double)(clock() - start) / CLOCKS_PER_SEC;
	if (failures) {
		t->failed++;
		printf("FAIL %s (%u failed checks)\n", running, failures);
	} else {
		t->passed++;
		printf("ok   %s (%.0f ms)\n", running, ms);
	}
	fflush(stdout);
}

static void leak_check(struct tally *t)
{
#ifdef __SANITIZE_ADDRESS__
	/* A failed check returns early and leaks, so leaks only count when all else passed. */
	if (!t->failed) {
		bool leaked = __lsan_do_recoverable_leak_check();
		printf("%s leak_check\n", leaked ? "FAIL" : "ok  ");
		t->failed += leaked;
		t->passed += !leaked;
		fflush(stdout);
	}
#else
	(void)t;
#endif
}

/* One worker of `-j N`: test indexes from `queue` (each read of a pipe of at most
 * PIPE_BUF bytes is whole, so two workers never take one test) until it is empty, then its
 * tally into `results`. */
static void worker(int queue, int results)
{
	struct tally t = { 0, 0 };
	uint32_t i;
	while (read(queue, &i, sizeof i) == (ssize_t)sizeof i)
		run_test(i, &t);
	leak_check(&t);
	if (write(results, &t, sizeof t) != (ssize_t)sizeof t)
		_Exit(2);
	_Exit(0);
}

static int run_in_workers(unsigned jobs, const char *only, struct tally *total)
{
	int queue[2], results[2];
	if (pipe(queue) || pipe(results)) {
		perror("matcha_tests: pipe");
		return -1;
	}
	uint32_t selected = 0;
	for (uint32_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (only && !strstr(tests[i].name, only))
			continue;
		/* The queue holds every index before a worker starts: a few hundred bytes, far
		 * below a pipe's capacity. */
		if (write(queue[1], &i, sizeof i) != (ssize_t)sizeof i) {
			perror("matcha_tests: queue");
			return -1;
		}
		selected++;
	}
	close(queue[1]);
	for (unsigned w = 0; w < jobs; w++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("matcha_tests: fork");
			return -1;
		}
		if (pid == 0) {
			close(results[0]);
			worker(queue[0], results[1]);
		}
	}
	close(queue[0]);
	close(results[1]);
	unsigned reported = 0;
	struct tally t;
	while (read(results[0], &t, sizeof t) == (ssize_t)sizeof t) {
		total->passed += t.passed;
		total->failed += t.failed;
		reported++;
	}
	for (;;) {
		int status;
		if (wait(&status) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			/* A worker that crashed took its test's result and the rest of its tally. */
			printf("FAIL a worker %s %d\n", WIFEXITED(status) ? "exited with" : "died of signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			total->failed++;
		}
	}
	if (reported != jobs)
		printf("%u of %u workers reported, %u tests selected\n", reported, jobs, selected);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned jobs = 1;
	int opt;
	while ((opt = getopt(argc, argv, "j:")) != -1) {
		char *end;
		unsigned long n = strtoul(optarg, &end, 10);
		if (opt != 'j' || *end || n < 1 || n > 64) {
			fprintf(stderr, "usage: %s [-j N (1 to 64)] [substring]\n", argv[0]);
			return 2;
		}
		jobs = (unsigned)n;
	}
	const char *only = optind < argc ? argv[optind] : NULL;
	const char *env = getenv("MATCHA_SEED");
	run_seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	printf("seed: %llu (set MATCHA_SEED to repeat)\n", (unsigned long long)run_seed);
	fflush(stdout);

	struct tally total = { 0, 0 };
	if (jobs > 1) {
		if (run_in_workers(jobs, only, &total))
			return 1;
	} else {
		for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
			if (!only || strstr(tests[i].name, only))
				run_test(i, &total);
		leak_check(&total);
	}
	printf("%u passed, %u failed\n", total.passed, total.failed);
	fflush(stdout);
	/* _Exit: no end-of-process leak report after the summary line. */
	_Exit(total.failed ? 1 : 0);
}
