# Cortex-M boards of the reference kernel's Cortex-M port, for firmware/Makefile and
# firmware/suite/Makefile. Set CM_BOARD, include this file; paths are relative to firmware/.
#
#   stm32f4       NUCLEO-F446RE (Cortex-M4, 128 KiB RAM, 512 KiB flash), flash image
#   stm32f401     NUCLEO-F401RE: the same code in 96 KiB of RAM, at the reset clock only
#   rp2040        Raspberry Pi Pico (Cortex-M0+), an SRAM image (load as UF2 or by SWD)
#   qemu-stm32    the STM32F4 board code on QEMU netduinoplus2 (STM32F405): semihosting
#                 console and exit, lines raised in software
#   qemu-m0plus   the same, compiled for the Cortex-M0+ (ARMv6-M code of the RP2040 build,
#                 run by QEMU's Cortex-M4 model: QEMU has no RP2040)
#   stm32f4-fmc   NUCLEO-F446ZE (Nucleo-144: the FMC's pins on its headers), the stm32f4
#                 build with the markers on the FMC's bank 1 (MARKER=bus; fmc_stm32.h)
#   qemu-stm32-fmc  that build on qemu-stm32: QEMU has no FMC, so the FMC's registers and
#                 window are in a range QEMU logs stores to (fmc_stm32.h)
#
# Gives CM_CC, CM_ARCH (compile and link), CM_DEFS, CM_LDFLAGS, CM_BOARD_SRC (board sources),
# CM_MARKER_DIR (where the board's ls_marker_port.h is, under suite/) and CM_SUITE_DEFS (the
# suite's sizes for the board's RAM). CM_ARENA_KIB=n overrides the thread stack arena.
#
# CM_CLOCK=full (default) runs the processor at the clock people use: the F446 at 180 MHz
# from the PLL (clock_stm32f4.h; CM_CLOCK=full-hse: from the ST-LINK's 8 MHz instead of the
# HSI), the RP2040 at 125 MHz from PLL_SYS (clock_rp2040.h); CM_CLOCK=reset keeps the reset
# clock (STM32 HSI 16 MHz, RP2040 its 12 MHz crystal). CPU_HZ, SysTick and the console's
# divisors follow. Build directories of a reset-clock build end in -reset-clock.
#
# The NUCLEO-F446RE has 128 KiB of RAM: 84 KiB of stacks, so the suite's threads get 320
# bytes (a thread's own calls; ISRs run on the main stack) and SEO-f reaches its 255 pending
# threads. The QEMU boards use the same sizes (netduinoplus2's STM32F405 has 128 KiB too),
# so CI runs what the Nucleo runs. The F401RE's 96 KiB take 48 KiB of stacks and SEO-f up
# to 128. The RP2040 has room for the whole suite.

CM_CLOCK ?= full
CM_CLOCK_DEFS_full := -DCM_CLOCK_FULL
CM_CLOCK_DEFS_full-hse := -DCM_CLOCK_FULL -DCM_CLOCK_HSE
CM_CLOCK_DEFS_reset :=
ifeq ($(filter full full-hse reset,$(CM_CLOCK)),)
$(error CM_CLOCK must be full, full-hse or reset, not '$(CM_CLOCK)')
endif
ifeq ($(CM_CLOCK),full-hse)
ifneq ($(filter rp2040 qemu-m0plus,$(CM_BOARD)),)
$(error CM_CLOCK=full-hse: the ST-LINK's clock is the Nucleo's (STM32 boards only))
endif
endif
CM_CLOCK_SUFFIX := $(if $(filter reset,$(CM_CLOCK)),-reset-clock,$(if $(filter full-hse,$(CM_CLOCK)),-hse))

CM_PREFIX ?= arm-none-eabi-
CM_CC := $(CM_PREFIX)gcc
CM_ARCH_SRC := ports/cortex-m/arch_cm.c ports/cortex-m/switch.S
CM_QEMU_LD := -Wl,--defsym=__flash=0x08000000 -Wl,--defsym=__flash_size=0x100000 \
              -Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x20000

# The FMC boards are the STM32F4 ones with CM_FMC_MARKERS: fmc_stm32.c and its marker port.
CM_FMC_BOARDS := stm32f4-fmc qemu-stm32-fmc
ifneq ($(filter $(CM_FMC_BOARDS),$(CM_BOARD)),)
CM_FMC_DEFS := -DCM_FMC_MARKERS $(if $(CM_FMC_DATAST),-DCM_FMC_DATAST=$(CM_FMC_DATAST)u)
CM_FMC_SRC := ports/cortex-m/fmc_stm32.c
endif
CM_BASE_BOARD := $(if $(CM_FMC_DEFS),$(patsubst %-fmc,%,$(CM_BOARD)),$(CM_BOARD))

ifeq ($(CM_BASE_BOARD),stm32f4)
CM_ARCH := -mcpu=cortex-m4 -mthumb -mfloat-abi=soft
CM_ARENA_KIB ?= 84
CM_SUITE_DEFS := -DSUITE_STACK=320u
CM_LDFLAGS := -Wl,--defsym=__flash=0x08000000 -Wl,--defsym=__flash_size=0x80000 \
              -Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x20000
CM_BOARD_SRC := ports/cortex-m/board_stm32f4.c
CM_MARKER_DIR := stm32f4
else ifeq ($(CM_BASE_BOARD),stm32f401)
ifneq ($(CM_CLOCK),reset)
$(error CM_BOARD=stm32f401: CM_CLOCK=reset (the full-clock set-up is the F446's 180 MHz))
endif
CM_ARCH := -mcpu=cortex-m4 -mthumb -mfloat-abi=soft
CM_ARENA_KIB ?= 48
CM_SUITE_DEFS := -DSUITE_STACK=320u -DSUITE_SEO_F_MAX=128u
CM_LDFLAGS := -Wl,--defsym=__flash=0x08000000 -Wl,--defsym=__flash_size=0x80000 \
              -Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x18000
CM_BOARD_SRC := ports/cortex-m/board_stm32f4.c
CM_MARKER_DIR := stm32f4
else ifeq ($(CM_BASE_BOARD),rp2040)
# SRAM image: "flash" = the first 48 KiB of SRAM (code, entered at 0x20000000 by the boot
# ROM), "ram" = the rest up to 0x20042000.
CM_ARCH := -mcpu=cortex-m0plus -mthumb -mfloat-abi=soft
CM_ARENA_KIB ?= 128
CM_SUITE_DEFS := -DSUITE_STACK=384u
CM_LDFLAGS := -Wl,--defsym=__flash=0x20000000 -Wl,--defsym=__flash_size=0xC000 \
              -Wl,--defsym=__ram=0x2000C000 -Wl,--defsym=__ram_size=0x36000
CM_BOARD_SRC := ports/cortex-m/board_rp2040.c ports/cortex-m/rp2040_entry.S
CM_MARKER_DIR := rp2040
else ifneq ($(filter qemu-stm32 qemu-m0plus,$(CM_BASE_BOARD)),)
# The Nucleo's sizes under QEMU; qemu-m0plus runs the RP2040's ARMv6-M code on the same model.
CM_ARCH := -mcpu=$(if $(filter qemu-m0plus,$(CM_BOARD)),cortex-m0plus,cortex-m4) -mthumb \
           -mfloat-abi=soft
CM_DEFS := -DCM_QEMU
CM_ARENA_KIB ?= 84
CM_SUITE_DEFS := -DSUITE_STACK=320u
CM_LDFLAGS := $(CM_QEMU_LD) --crt0=semihost --oslib=semihost
CM_BOARD_SRC := ports/cortex-m/board_stm32f4.c
CM_MARKER_DIR := stm32f4
else
$(error CM_BOARD must be stm32f4, stm32f401, rp2040, qemu-stm32, qemu-m0plus, $(CM_FMC_BOARDS), not '$(CM_BOARD)')
endif

ifneq ($(filter $(CM_FMC_BOARDS),$(CM_BOARD)),)
CM_DEFS += $(CM_FMC_DEFS)
CM_BOARD_SRC += $(CM_FMC_SRC)
CM_MARKER_DIR := stm32-fmc
endif

CM_COMMON := $(CM_ARCH) --specs=picolibc.specs -std=gnu11 -Os -g -ffunction-sections \
             -fdata-sections $(CM_DEFS) $(CM_CLOCK_DEFS_$(CM_CLOCK)) -DCM_STACK_ARENA_KIB=$(CM_ARENA_KIB)u
CM_INC := -Iinclude -Ikernel/include -Ikernel -Iports/cortex-m
CM_QEMU_RUN := qemu-system-arm -machine netduinoplus2 -nographic -monitor none -serial none \
               -semihosting-config enable=on,target=native -kernel
