/* PCIe configuration through ECAM (pcie.h): scan one bus for a class code, place BAR0. */
#include "pcie.h"

#include "streamfat/sf.h"

/* Type-0 configuration header offsets (PCI Local Bus 3.0, 6.1). */
#define CFG_ID        0x00u   /* vendor (16) | device (16) << 16 */
#define CFG_CMD       0x04u   /* command (16) | status (16) << 16 */
#define CFG_CLASS     0x08u   /* revision (8) | class code (24) << 8 */
#define CFG_HDR       0x0Cu   /* header type in bits 23:16, bit 23: multi-function */
#define CFG_BAR0      0x10u

#define CMD_MEM       0x0002u
#define CMD_MASTER    0x0004u
#define CMD_INTX_OFF  0x0400u

static volatile uint32_t *cfg(const struct sf_pcie_host *h, unsigned bus, unsigned dev,
                              unsigned fn, unsigned off)
{
    /* ECAM: 1 MiB per bus, 32 KiB per device, 4 KiB per function (PCIe 3.0, 7.2.2) */
    return (volatile uint32_t *)(h->ecam + ((uintptr_t)bus << 20) + ((uintptr_t)dev << 15) +
                                 ((uintptr_t)fn << 12) + off);
}

int sf_pcie_find_class(const struct sf_pcie_host *h, uint32_t class_code, struct sf_pcie_fn *out)
{
    for (unsigned dev = 0; dev < 32; dev++) {
        for (unsigned fn = 0; fn < 8; fn++) {
            uint32_t id = *cfg(h, h->bus, dev, fn, CFG_ID);
            if ((id & 0xFFFFu) == 0xFFFFu) {
                if (fn == 0)
                    break;              /* no device: no other function either */
                continue;
            }
            uint32_t cls = *cfg(h, h->bus, dev, fn, CFG_CLASS) >> 8;
            uint32_t hdr = *cfg(h, h->bus, dev, fn, CFG_HDR) >> 16;
            if (cls == class_code && (hdr & 0x7Fu) == 0) {
                out->bus = h->bus;
                out->dev = (uint8_t)dev;
                out->fn = (uint8_t)fn;
                out->vendor = (uint16_t)id;
                out->device = (uint16_t)(id >> 16);
                out->class_code = cls;
                out->bar0 = 0;
                out->bar0_size = 0;
                return 0;
            }
            if (fn == 0 && !(hdr & 0x80u))
                break;                  /* single-function device */
        }
    }
    return SF_ENOENT;
}

int sf_pcie_enable_bar0(struct sf_pcie_host *h, struct sf_pcie_fn *f)
{
    volatile uint32_t *cmd = cfg(h, f->bus, f->dev, f->fn, CFG_CMD);
    volatile uint32_t *bar = cfg(h, f->bus, f->dev, f->fn, CFG_BAR0);
    uint32_t orig = bar[0];
    int is64;
    uint64_t mask;

    if (orig & 1u)
        return SF_ENOTSUP;              /* an I/O BAR */
    is64 = ((orig >> 1) & 3u) == 2u;
    /* size it with decoding off: all ones in, the address bits that stick out */
    *cmd = (*cmd & 0xFFFFu & ~(uint32_t)(CMD_MEM | CMD_MASTER));
    bar[0] = 0xFFFFFFFFu;
    mask = bar[0] & ~0xFull;
    if (is64) {
        bar[1] = 0xFFFFFFFFu;
        mask |= (uint64_t)bar[1] << 32;
    } else {
        mask |= 0xFFFFFFFF00000000ull;
    }
    uint64_t size = ~mask + 1;
    if ((mask & 0xFFFFFFF0u) == 0 || size == 0 || (size & (size - 1)))
        return SF_ENOTSUP;              /* no BAR0 */

    uint64_t next = h->mem_next ? h->mem_next : h->mem_pci;
    uint64_t at = (next + size - 1) & ~(size - 1);
    if (at < h->mem_pci || at + size > h->mem_pci + h->mem_size || at + size > 0x100000000ull)
        return SF_ENOSPC;
    bar[0] = (uint32_t)at | (orig & 0xFu);
    if (is64)
        bar[1] = (uint32_t)(at >> 32);
    h->mem_next = at + size;
    f->bar0 = (uintptr_t)(at - h->mem_pci + h->mem_cpu);
    f->bar0_size = size;
    *cmd = (*cmd & 0xFFFFu) | CMD_MEM | CMD_MASTER | CMD_INTX_OFF;
    return 0;
}
