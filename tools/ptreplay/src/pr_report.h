/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_report: print the results of a decode (pr_decode.h).
 */
#ifndef PR_REPORT_H
#define PR_REPORT_H

#include "pr_decode.h"

#include <stdint.h>
#include <stdio.h>

/* Print the outputs @d->rp->opts selects to @out; @d is not changed.
 * Returns the number of decode errors.
 */
extern uint64_t pr_report_print(const struct pr_decode *d, FILE *out);

#endif /* PR_REPORT_H */
