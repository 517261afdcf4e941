/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "sim_server.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"

static int exactly(const struct sim_server *s, int fd, uint8_t *p, size_t n, bool out)
{
	while (n) {
		ssize_t k;
		if (s->tty)
			k = out ? write(fd, p, n) : read(fd, p, n);
		else
			k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void *serve(void *arg)
{
	struct sim_server *s = arg;
	int c = s->tty ? s->listen_fd : accept(s->listen_fd, NULL, NULL);
	if (c < 0)
		return NULL;
	uint8_t req[12], ans[8];
	while (exactly(s, c, req, sizeof req, false) == 0) {
		long n = atomic_fetch_add(&s->served, 1);
		if (n == atomic_load(&s->close_at))
			break;
		uint32_t addr = le32(req + 4), data = le32(req + 8), val = 0;
		uint8_t resp = 0;
		if ((req[0] != 'R' && req[0] != 'W') || addr % 4)
			resp = 0xFF;
		else if (addr >= s->decerr_from)
			resp = 3;
		else if (req[0] == 'R')
			resp = fake_ops.read32(s->fd, addr, &val) ? 2 : 0;
		else
			resp = fake_ops.write32(s->fd, addr, data) ? 2 : 0;
		memset(ans, 0, sizeof ans);
		ans[0] = n == atomic_load(&s->wrong_op_at) ? 'X' : req[0];
		ans[1] = resp;
		for (int i = 0; i < 4; i++)
			ans[4 + i] = (uint8_t)(val >> 8 * i);
		if (exactly(s, c, ans, sizeof ans, true))
			break;
	}
	if (!s->tty)
		close(c);
	return NULL;
}

static void init(struct sim_server *s, struct fake_dev *fd, bool tty)
{
	s->fd = fd;
	s->tty = tty;
	s->decerr_from = UINT32_MAX;
	atomic_init(&s->close_at, -1);
	atomic_init(&s->wrong_op_at, -1);
	atomic_init(&s->served, 0);
}

int sim_server_start_pty(struct sim_server *s, struct fake_dev *fd)
{
	init(s, fd, true);
	s->listen_fd = posix_openpt(O_RDWR | O_NOCTTY);
	const char *name = s->listen_fd >= 0 && !grantpt(s->listen_fd) && !unlockpt(s->listen_fd)
				   ? ptsname(s->listen_fd) : NULL;
	if (!name || strlen(name) >= sizeof s->path) {
		check_fail(__FILE__, __LINE__, "cannot open a pseudo-terminal");
		return -1;
	}
	memcpy(s->path, name, strlen(name) + 1);
	if (pthread_create(&s->thread, NULL, serve, s)) {
		check_fail(__FILE__, __LINE__, "cannot serve %s", s->path);
		return -1;
	}
	return 0;
}

int sim_server_start(struct sim_server *s, struct fake_dev *fd)
{
	static unsigned count;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	init(s, fd, false);
	snprintf(s->path, sizeof s->path, "/tmp/matcha-test-%d-%u.sock", (int)getpid(), count++);
	unlink(s->path);
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) ||
	    listen(s->listen_fd, 1) || pthread_create(&s->thread, NULL, serve, s)) {
		check_fail(__FILE__, __LINE__, "cannot serve %s", s->path);
		return -1;
	}
	return 0;
}

void sim_server_stop(struct sim_server *s)
{
	pthread_join(s->thread, NULL);
	close(s->listen_fd);
	if (!s->tty)
		unlink(s->path);
}
