/*
 * pid_alive.h - whether a process id names a running process on this host, so that a run given a
 * pid that is not there is told at once rather than reporting "0 processes" at its end.
 */
#ifndef PERFLOG_PID_ALIVE_H
#define PERFLOG_PID_ALIVE_H

/* 1 when `pid` (> 0) is a running process (one of another user counts), 0 when there is none. */
int pid_alive(int pid);

#endif
