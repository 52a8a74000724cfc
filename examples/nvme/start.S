/* Start-up for QEMU's virt board (bare metal, EL1, MMU and caches off): stack, .bss,
 * FP/SIMD access, exception vectors, main, then a semihosting exit with main's status. */
    .section .text.start, "ax"
    .global _start
_start:
    ldr     x1, =__stack_top
    mov     sp, x1
    ldr     x1, =__bss_start
    ldr     x2, =__bss_end
1:  cmp     x1, x2
    b.hs    2f
    str     xzr, [x1], #8
    b       1b
2:  mov     x1, #(3 << 20)          /* CPACR_EL1.FPEN: no trap on FP/SIMD */
    msr     cpacr_el1, x1
    ldr     x1, =vectors
    msr     vbar_el1, x1
    isb
    bl      main
    bl      board_exit
3:  wfi
    b       3b

/* Every exception is fatal here: board_fault(kind, esr, elr, far) reports and exits. */
    .macro  vec kind
    .balign 0x80
    mov     x0, #\kind
    mrs     x1, esr_el1
    mrs     x2, elr_el1
    mrs     x3, far_el1
    b       board_fault
    .endm

    .section .text.vectors, "ax"
    .balign 0x800
vectors:
    vec 0
    vec 1
    vec 2
    vec 3
    vec 4
    vec 5
    vec 6
    vec 7
    vec 8
    vec 9
    vec 10
    vec 11
    vec 12
    vec 13
    vec 14
    vec 15
