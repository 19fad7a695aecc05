"""The page faults of five partitions' worth of arrays, as source text a test runs in a process of
its own (a fresh interpreter, or a worker) to see whether glibc keeps freed arrays there."""

FAULTS = '''
import resource
import numpy as np

def faults():  # page faults of five cycles of twenty 4 MiB arrays, allocated and freed
    def cycle():
        arrays = [np.ones(1 << 19) for _ in range(20)]
        del arrays
    cycle()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        cycle()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
'''
