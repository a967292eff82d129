/*
 * linux_collector.h - Linux-only knobs of the collector of collector.h.
 */
#ifndef PERFLOG_LINUX_COLLECTOR_H
#define PERFLOG_LINUX_COLLECTOR_H

#include "collectors/collector.h"

#include <stdint.h>

/* The default re-read period of an interface's speed and MTU, and the period where rtnetlink's
 * link messages say when one changed (linux_linkwatch.h): there the period is only a safety net
 * for a driver that changes a speed without telling. */
#define COLLECTOR_SYSFS_PERIOD_MS         5000
#define COLLECTOR_SYSFS_WATCHED_PERIOD_MS 60000

/*
 * Set how often the optional sysfs attributes of an interface (speed, mtu) are re-read, in ms;
 * 0 re-reads them on every collect (tests). They are always read when an interface is first
 * seen. Not thread-safe, like the rest of the collector.
 */
void collector_set_sysfs_period(struct collector *c, int64_t period_ms);

/* How many of the interfaces' speed and MTU files stay open between reads at most: an eighth of
 * the process's descriptor limit, which collector_new raises to the hard limit (up to 65 536),
 * within 128..4096; the setter is for tests. Files beyond are opened for each read. Not
 * thread-safe. */
size_t collector_attr_fds_max(const struct collector *c);
void collector_set_attr_fds_max(struct collector *c, size_t n);

#endif
