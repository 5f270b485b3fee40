/* Bring-up: console, GPIO markers, trace-window markers, mtime, exit code 0.
 *
 * tests/system/test_sim_soc.py checks the ground-truth log against exactly these stores.
 */
#include <stdio.h>

#include "soc.h"

static const uint16_t gpio_markers[] = {0x0001, 0x1234, 0xBEEF, 0xFFFF, 0x0000};

int main(void)
{
    printf("hello from the latscope SoC\n");

    /* GPIO marker port: ONE store per marker, the strobe (bit 16) toggles every time. */
    uint32_t strobe = 0;
    for (unsigned i = 0; i < sizeof gpio_markers / sizeof gpio_markers[0]; i++) {
        strobe ^= SOC_GPIO_STROBE;
        SOC_REG(SOC_GPIO_OUT) = gpio_markers[i] | strobe;
    }

    /* Trace window: one store per marker, anywhere in the window. */
    for (uint32_t i = 0; i < 4; i++)
        SOC_REG(SOC_TRACE_BASE + 4 * i) = 0xCAFE0000u + i;

    /* mtime counts cycles since reset release: its value goes to the window at +0x80, so
     * the test can compare it with the store's cycle in the ground-truth log. */
    SOC_REG(SOC_TRACE_BASE + 0x80) = SOC_REG(SOC_MTIME_LO);

    printf("markers written, mtime=%llu\n", (unsigned long long)soc_mtime());
    return 0;
}
