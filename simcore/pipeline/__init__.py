"""The AI Core's pipes: transfer, MMAD and drain costs, the kernel's traffic, the simulator."""
