/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A simulator control socket for the tests (docs/sim-socket.md): a thread that accepts one
 * client on a Unix socket and runs its requests on a fake device, with faults to order.
 */
#ifndef SIM_SERVER_H
#define SIM_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fake_dev.h"

struct sim_server {
	char path[108];
	int listen_fd;             /* the listening socket, or a pseudo-terminal's master */
	bool tty;                  /* serving a serial line: the pseudo-terminal at `path` */
	pthread_t thread;
	struct fake_dev *fd;
	uint32_t decerr_from;      /* addresses from here on answer DECERR */
	atomic_long close_at;      /* request number (from 0) at which the server closes the
				      connection without answering; -1 never */
	atomic_long wrong_op_at;   /* request number answered with another op byte; -1 never */
	atomic_long served;        /* requests received */
};

/* Starts serving fd on a fresh socket path; fails the calling test on error. */
int sim_server_start(struct sim_server *s, struct fake_dev *fd);
/* Starts serving fd on a fresh pseudo-terminal, `path` its slave (a serial line as the
 * serial: backend opens it); fails the calling test on error. */
int sim_server_start_pty(struct sim_server *s, struct fake_dev *fd);
/* Waits for the client to go and removes the socket. */
void sim_server_stop(struct sim_server *s);

#endif
