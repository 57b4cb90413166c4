"""exact"""
