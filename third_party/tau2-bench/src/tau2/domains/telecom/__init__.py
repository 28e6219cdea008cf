# Copyright Sierra
