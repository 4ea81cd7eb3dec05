"""Reports and analyses: the papers' tables and figures, reproduced from this package's solvers.

One file per report; each is an application-level module (it may import the solvers, ``bench``
and the networks; nothing below imports it). ``puzzlezero report NAME`` runs any of them
(:mod:`puzzlezero.cli.report_cmds`):

========================  ==============================================================  ===============
``report NAME``           what                                                            module
========================  ==============================================================  ===============
``tables``                DeepCubeA Tables 1-5: learned BWAS vs PDB BWAS vs optimal,      :mod:`.deepcubea_tables`
                          memory, heuristic speed
``analysis``              Dong et al. §5 and DeepCubeA: 3- and 4-move patterns of         :mod:`.solution_analysis`
                          solutions, conjugates and commutators, heuristic vs optimal
``solve-rate``            Rute's plot: solve rate by scramble depth, policy-greedy        :mod:`.solve_rate`
                          and MCTS, ADI vs self-play vs DAVI networks
``wcd``                   Yao's Table 1: A* with the plain value heuristic against        :mod:`.wcd_table1`
                          1- and 2-level weighted convolutional distance
``layered``               Dong et al.'s Table 1: layer-by-layer BWAS with single- and     :mod:`.layered_table1`
                          multi-head networks against whole-cube DeepCubeA
``merge``                 bench reports of one run made in parts, joined into one: the    :mod:`.merge`
                          summary recomputed, the settings checked equal
========================  ==============================================================  ===============
"""

#: ``puzzlezero report`` names and their modules (imported when the report runs)
REPORTS: dict[str, str] = {
    "tables": "puzzlezero.reports.deepcubea_tables",
    "analysis": "puzzlezero.reports.solution_analysis",
    "solve-rate": "puzzlezero.reports.solve_rate",
    "wcd": "puzzlezero.reports.wcd_table1",
    "layered": "puzzlezero.reports.layered_table1",
    "merge": "puzzlezero.reports.merge",
}

__all__ = ["REPORTS"]
