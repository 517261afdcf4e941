/*
 * The sim: backend: one bus transaction per message over a simulator's Unix stream socket
 * (docs/sim-socket.md). A request is 12 bytes (op, 3 zero bytes, addr, data), the answer 8
 * (op, resp, 2 zero bytes, data), integers little-endian; one transaction is outstanding at
 * a time. A short read or write is a closed connection: the handle stays unusable after it.
 */
/* mmap, ioctl, O_CLOEXEC, MSG_NOSIGNAL, SOCK_CLOEXEC */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"

#define OP_READ 'R'
#define OP_WRITE 'W'
#define RESP_CANNOT_RUN 0xFF

/* A simulator answers within a few clocks of simulated time; one that is silent this long
 * is stuck (or stopped in a debugger), and the call fails rather than hangs. */
#define ANSWER_TIMEOUT_S 60

/* Failure codes of the callbacks (the answer's resp when the simulator gave one). */
enum sim_failure {
	SIM_CLOSED = 0x100, /* the connection is closed (now or before) */
	SIM_TIMEOUT,
	SIM_BAD_ANSWER,     /* an answer that does not belong to the request */
};

struct sim_conn {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char desc[256];
};

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Sends or receives exactly n bytes; false on a closed or failed connection. */
static bool transfer(struct sim_conn *c, uint8_t *p, size_t n, bool send_it, int *why)
{
	while (n) {
		ssize_t k = send_it ? send(c->fd, p, n, MSG_NOSIGNAL) : recv(c->fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			bool timeout = k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
			*why = timeout ? SIM_TIMEOUT : SIM_CLOSED;
			return false;
		}
		p += k;
		n -= (size_t)k;
	}
	return true;
}

static int transaction(struct sim_conn *c, uint8_t op, uint32_t addr, uint32_t data,
		       uint32_t *val)
{
	uint8_t req[12] = { op }, ans[8];
	int why;
	if (c->fd < 0)
		return SIM_CLOSED;
	put32(req + 4, addr);
	put32(req + 8, data);
	if (!transfer(c, req, sizeof req, true, &why) || !transfer(c, ans, sizeof ans, false, &why)) {
		/* A half-finished transaction cannot be resumed: the stream is out of step. */
		close(c->fd);
		c->fd = -1;
		return why;
	}
	if (ans[0] != op) {
		close(c->fd);
		c->fd = -1;
		return SIM_BAD_ANSWER;
	}
	if (ans[1])
		return ans[1];
	if (val)
		*val = get32(ans + 4);
	return 0;
}

static int sim_read32(void *ctx, uint32_t addr, uint32_t *val)
{
	return transaction(ctx, OP_READ, addr, 0, val);
}

static int sim_write32(void *ctx, uint32_t addr, uint32_t val)
{
	return transaction(ctx, OP_WRITE, addr, val, NULL);
}

static const char *sim_describe(void *ctx, int rc)
{
	struct sim_conn *c = ctx;
	const char *what;
	switch (rc) {
	case 2: what = "the simulator answered SLVERR (resp 2)"; break;
	case 3: what = "the simulator answered DECERR (resp 3: no slave at that address)"; break;
	case RESP_CANNOT_RUN:
		what = "the simulator could not run the request (resp 0xff)";
		break;
	case SIM_CLOSED: what = "the simulator closed the connection"; break;
	case SIM_TIMEOUT: what = "no answer from the simulator within the timeout"; break;
	case SIM_BAD_ANSWER:
		what = "the simulator's answer is not for this request (op byte differs)";
		break;
	default:
		snprintf(c->desc, sizeof c->desc, "the simulator answered resp %d on %s", rc,
			 c->path);
		return c->desc;
	}
	snprintf(c->desc, sizeof c->desc, "%s (sim:%s)", what, c->path);
	return c->desc;
}

static void sim_release(void *ctx)
{
	struct sim_conn *c = ctx;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

int matcha_sim_connect(matcha_dev *dev, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path)
		return matcha_fail(dev, MATCHA_EINVAL, "sim:%s: a socket path is at most %zu bytes",
				   path, sizeof sa.sun_path - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	struct sim_conn *c = calloc(1, sizeof *c);
	if (!c)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the connection to %s", path);
	memcpy(c->path, path, strlen(path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int err = errno;
		sim_release(c);
		return matcha_fail(dev, MATCHA_ENODEV, "sim:%s: cannot connect: %s%s", path,
				   strerror(err), err == ENOENT || err == ECONNREFUSED ?
				   " (is the simulator running?)" : "");
	}
	struct timeval tv = { .tv_sec = ANSWER_TIMEOUT_S };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	dev->ops = (struct matcha_regs_ops){ sim_read32, sim_write32 };
	dev->ctx = c;
	dev->backend = (struct matcha_backend){ sim_release, sim_describe, 0 };
	return 0;
}
