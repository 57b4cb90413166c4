"""The command line's machinery beside its commands (:mod:`dansched.cli`): the help's layout
(:mod:`.help`), the option types (:mod:`.options`), reading a command's inputs
(:mod:`.inputs`), the lines on stderr and the pending warnings (:mod:`.lines`), and the
exit statuses of errors and signals (:mod:`.exits`)."""
