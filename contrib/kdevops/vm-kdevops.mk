# kdevops's top Makefile in brief, for contrib/kdevops/vm-run: its "space", the workflow's
# Makefile, and extra_vars.yaml written as kdevops's Makefile.extra_vars writes it (each
# WORKFLOW_ARGS entry through `echo KEY: VALUE`, each WORKFLOW_ARGS_SEPARATED one quoted, its
# "+" put back as spaces), with topdir_path and kdevops_host_prefix, which kdevops adds.
null :=
space := ${null} ${null}
include $(dir $(lastword $(MAKEFILE_LIST)))workflows/rpcrdma/Makefile

extra_vars.yaml:
	@echo --- > $@
	@$(foreach exp,$(WORKFLOW_ARGS),echo $(subst =,: ,$(exp)) >> $@;)
	@$(foreach exp,$(WORKFLOW_ARGS_SEPARATED),echo $(subst +, ,$(subst =,: ,"$(exp)")) >> $@;)
	@echo "topdir_path: '$(TOPDIR_PATH)'" >> $@
	@echo "kdevops_host_prefix: 'kdevops'" >> $@
