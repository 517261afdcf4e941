/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sim: and serial: backends: one bus transaction per message (docs/sim-socket.md), over
 * a simulator's Unix stream socket or over a serial line to a board's UART bridge. A
 * request is 12 bytes (op, 3 zero bytes, addr, data), the answer 8 (op, resp, 2 zero bytes,
 * data), integers little-endian; one transaction is outstanding at a time. A short read or
 * write is a closed connection: the handle stays unusable after it.
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
#include <fcntl.h>
#include <termios.h>
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
	bool tty;          /* a serial line (read/write) rather than a socket (recv/send) */
	const char *peer;  /* "the simulator" or "the board", for messages */
	const char *scheme;
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
		ssize_t k;
		if (c->tty)
			k = send_it ? write(c->fd, p, n) : read(c->fd, p, n);
		else
			k = send_it ? send(c->fd, p, n, MSG_NOSIGNAL) : recv(c->fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			/* A serial line's read returns 0 when its VTIME runs out. */
			bool timeout = (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ||
				       (k == 0 && c->tty && !send_it);
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
	case 2: what = "answered SLVERR (resp 2)"; break;
	case 3: what = "answered DECERR (resp 3: no slave at that address)"; break;
	case RESP_CANNOT_RUN: what = "could not run the request (resp 0xff)"; break;
	case SIM_CLOSED: what = "closed the connection"; break;
	case SIM_TIMEOUT: what = "did not answer within the timeout"; break;
	case SIM_BAD_ANSWER:
		snprintf(c->desc, sizeof c->desc, "%s's answer is not for this request (op byte "
			 "differs) (%s:%s)", c->peer, c->scheme, c->path);
		return c->desc;
	default:
		snprintf(c->desc, sizeof c->desc, "%s answered resp %d (%s:%s)", c->peer, rc,
			 c->scheme, c->path);
		return c->desc;
	}
	snprintf(c->desc, sizeof c->desc, "%s %s (%s:%s)", c->peer, what, c->scheme, c->path);
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
	c->peer = "the simulator";
	c->scheme = "sim";
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

static const struct { unsigned baud; speed_t speed; } bauds[] = {
	{ 9600, B9600 }, { 19200, B19200 }, { 38400, B38400 }, { 57600, B57600 },
	{ 115200, B115200 }, { 230400, B230400 }, { 460800, B460800 }, { 921600, B921600 },
	{ 1000000, B1000000 }, { 2000000, B2000000 }, { 3000000, B3000000 },
};

int matcha_serial_open(matcha_dev *dev, const char *arg)
{
	struct sim_conn *c = calloc(1, sizeof *c);
	if (!c)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the connection to %s", arg);
	c->fd = -1;
	c->tty = true;
	c->peer = "the board";
	c->scheme = "serial";
	const char *at = strchr(arg, '@');
	size_t len = at ? (size_t)(at - arg) : strlen(arg);
	unsigned long baud = 115200;
	speed_t speed = 0;
	if (at) {
		char *end;
		errno = 0;
		baud = strtoul(at + 1, &end, 10);
		if (errno || end == at + 1 || *end)
			baud = 0;
	}
	for (size_t i = 0; i < sizeof bauds / sizeof bauds[0]; i++)
		if (bauds[i].baud == baud)
			speed = bauds[i].speed;
	if (!len || len >= sizeof c->path || !speed) {
		sim_release(c);
		return matcha_fail(dev, MATCHA_EINVAL, "serial:%s is not DEVICE[@BAUD] with BAUD "
				   "one of 9600, 19200, ... 115200 (the default) ... 3000000", arg);
	}
	memcpy(c->path, arg, len);
	c->fd = open(c->path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	struct termios t;
	if (c->fd < 0 || tcgetattr(c->fd, &t) != 0) {
		int err = errno;
		sim_release(c);
		return matcha_fail(dev, MATCHA_ENODEV, "serial:%s: cannot open the serial line: %s",
				   arg, strerror(err));
	}
	/* 8 data bits, no parity, one stop bit, no flow control; a read waits at most VTIME
	 * tenths of a second for its first byte. */
	cfmakeraw(&t);
	t.c_cflag &= ~(tcflag_t)(CSTOPB | CRTSCTS);
	t.c_cflag |= CLOCAL | CREAD;
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 20;
	if (cfsetispeed(&t, speed) || cfsetospeed(&t, speed) || tcsetattr(c->fd, TCSANOW, &t)) {
		int err = errno;
		sim_release(c);
		return matcha_fail(dev, MATCHA_ENODEV, "serial:%s: cannot set up the line: %s", arg,
				   strerror(err));
	}
	/* Whatever an earlier client left unread is not an answer to us. */
	tcflush(c->fd, TCIOFLUSH);
	dev->ops = (struct matcha_regs_ops){ sim_read32, sim_write32 };
	dev->ctx = c;
	dev->backend = (struct matcha_backend){ sim_release, sim_describe, 0 };
	return 0;
}
