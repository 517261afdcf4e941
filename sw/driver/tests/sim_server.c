#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "sim_server.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"

static int exactly(int fd, uint8_t *p, size_t n, bool out)
{
	while (n) {
		ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
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
	int c = accept(s->listen_fd, NULL, NULL);
	if (c < 0)
		return NULL;
	uint8_t req[12], ans[8];
	while (exactly(c, req, sizeof req, false) == 0) {
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
		if (exactly(c, ans, sizeof ans, true))
			break;
	}
	close(c);
	return NULL;
}

int sim_server_start(struct sim_server *s, struct fake_dev *fd)
{
	static unsigned count;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	s->fd = fd;
	s->decerr_from = UINT32_MAX;
	atomic_init(&s->close_at, -1);
	atomic_init(&s->wrong_op_at, -1);
	atomic_init(&s->served, 0);
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
	unlink(s->path);
}
