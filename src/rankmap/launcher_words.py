"""Which words of a launcher command are the launcher's own options and which start the
program (``mpirun -n 4 --map-by core ./app -n 3``: the program's ``-n 3`` is not the
launcher's). Used by :mod:`rankmap.launch` and :mod:`rankmap.pmpi.environment`, which import
no part of each other."""

from __future__ import annotations

import os
import re

__all__ = ["program_index", "VALUE_OPTIONS", "PAIR_OPTIONS", "FLAG_OPTIONS"]

#: launcher options followed by their value as a separate word (srun, Open MPI's mpirun,
#: MPICH's hydra, aprun, smpirun); ``--opt=value`` carries its own
VALUE_OPTIONS = frozenset("""
-n -np --np --n -c -N -H -x -f -p -t -J -o -e -w -A -C -D -d -j -S -L -m -cc -sn -ppn
--host --hosts -host -hosts --hostfile -hostfile --machinefile -machinefile --default-hostfile
--map-by -map-by --bind-to -bind-to --rank-by -rank-by --rankfile -rankfile --npernode
-npernode --npersocket --wdir -wdir --prefix -prefix --path --output-filename --timeout --app
--cpus-per-proc --cpus-per-rank --ppr --preload-files --personality --launch-agent -launcher
-rmk -iface -configfile -genvlist -envlist -platform -trace-file -replay -wrapper -ext
--ntasks --nodes --partition --time --job-name --output --error --nodelist --exclude
--account --constraint --chdir --cpus-per-task --ntasks-per-node --mem --gres -rf
-outfile-pattern -errfile-pattern --report-pid -report-pid --report-uri -report-uri
""".split())
#: options followed by two words (``--mca NAME VALUE``, ``-genv NAME VALUE``)
PAIR_OPTIONS = frozenset("--mca -mca --gmca -gmca -genv -env --tune".split())
#: common options that take no value (an unknown option is a flag when the next word is a
#: program that exists, else it takes that word)
FLAG_OPTIONS = frozenset("""
--oversubscribe -oversubscribe --allow-run-as-root --report-bindings -report-bindings
--display-map -display-map --tag-output -tag-output --timestamp-output --merge-stderr-to-stdout
--use-hwthread-cpus --bind-to-core --bind-to-socket --nolocal --noprefix -q --quiet -v
--verbose -l --label -u --unbuffered --exclusive -O --overcommit -b -ss -map -trace
-verbose --display-allocation -display-allocation --display-devel-map
-keep-temps -foreground -genvall -genvnone -envall -envnone -prepend-rank --pernode -pernode
-K --kill-on-bad-exit --exact --overlap -k --no-kill -X --disable-status -Z --no-allocate
--pty --spread-job --use-min-nodes --multi-prog --test-only -E --preserve-env --contiguous
""".split())


def program_index(argv: list[str]) -> int:
    """Index in ``argv`` of the program the launcher starts: the first word that is neither
    an option of the launcher nor an option's value (``len(argv)`` when there is none).

    Words after it are the program's own: ``mpirun ./app -n 3`` gives the launcher no
    process count.

    Parameters
    ----------
    argv : list of str
        The launcher command, launcher first.

    Returns
    -------
    int
        The program's index (at least 1).
    """
    import shutil
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        if "=" in word or word in FLAG_OPTIONS or re.fullmatch(r"-n[0-9]+", word):
            i += 1
        elif word in VALUE_OPTIONS:
            i += 2
        elif word in PAIR_OPTIONS:
            i += 3
        elif i + 1 < len(argv) and (os.path.exists(argv[i + 1]) or shutil.which(argv[i + 1])):
            i += 1              # an unknown flag before the program
        else:
            i += 2              # an unknown option and its value
    return len(argv)
