/* latscope simulated SoC: the bring-up runtime linked into every sim/firmware program.
 *
 * - stdout/stderr of picolibc go to SIM_PUTC (the harness's console log);
 * - _exit() (reached through exit() or a return from main) writes SIM_EXIT;
 * - a constructor points mtvec to trap_entry (start.S) before main runs, because
 *   picolibc's crt0 sets no trap vector;
 * - the default trap_handler reports an unexpected trap and exits with code 3.
 */
#include <stdio.h>
#include <stdlib.h>

#include "soc.h"

static int soc_putc(char c, FILE *file)
{
    (void)file;
    SOC_REG(SOC_SIM_PUTC) = (uint8_t)c;
    return (uint8_t)c;
}

static FILE soc_console = FDEV_SETUP_STREAM(soc_putc, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdin = &soc_console;
FILE *const stdout = &soc_console;
FILE *const stderr = &soc_console;

void soc_exit(int code)
{
    SOC_REG(SOC_SIM_EXIT) = (uint32_t)code;
    for (;;)  /* the harness stops at the store (or lingers): never fall through */
        ;
}

void _exit(int code)
{
    soc_exit(code);
}

__attribute__((constructor(101)))
static void soc_install_trap_vector(void)
{
    csr_write(mtvec, (uint32_t)(uintptr_t)&trap_entry);
}

__attribute__((weak))
void trap_handler(uint32_t mcause, uint32_t mepc)
{
    printf("unexpected trap: mcause=0x%08lx mepc=0x%08lx mtval=0x%08lx\n",
           (unsigned long)mcause, (unsigned long)mepc, (unsigned long)csr_read(mtval));
    soc_exit(3);
}
