/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The context bits of the preempt count (include/linux/preempt.h), plain C: sis.bpf.h
 * reads the count with them, and the loader's unit tests build them for the host
 * (pelt_host.c, src/kcompat.rs) against both layouts.
 */
#ifndef __SIS_PREEMPT_H
#define __SIS_PREEMPT_H

#define SIS_SOFTIRQ_OFFSET	(1U << 8)	/* in_serving_softirq() */
/* To 7.2: hard irq count 16-19, NMI count 20-23. */
#define SIS_IRQ_MASK_OLD	(0xffU << 16)
/* 7.3 (HARDIRQ_DISABLE_BITS): 16-23 count hard irq disabling, hard irq 24-27, NMI 28. */
#define SIS_IRQ_MASK_NEW	(0x1fU << 24)

/* in_hardirq() || in_nmi() for the count @pc; @new_layout: 7.3's. */
static inline int pc_in_irq(u32 pc, int new_layout)
{
	return (pc & (new_layout ? SIS_IRQ_MASK_NEW : SIS_IRQ_MASK_OLD)) != 0;
}

/* in_task(): not in NMI, hard irq or softirq processing. */
static inline int pc_in_task(u32 pc, int new_layout)
{
	return !pc_in_irq(pc, new_layout) && !(pc & SIS_SOFTIRQ_OFFSET);
}

#endif /* __SIS_PREEMPT_H */
