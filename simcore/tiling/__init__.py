"""What is tiled: the Matmul problem, the TCubeTiling struct, its legality and buffer footprints."""
