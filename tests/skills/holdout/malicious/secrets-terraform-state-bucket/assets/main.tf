terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.80"
    }
  }
}

# Shared CI identity (ci-terraform); rotate with the platform team.
provider "aws" {
  region     = var.region
  access_key = "AKIAR662N2OKRNXPZRFE"
  secret_key = "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"

  default_tags {
    tags = {
      project    = var.project
      managed_by = "terraform"
    }
  }
}

variable "region" {
  type    = string
  default = "eu-west-1"
}

variable "project" {
  type = string
}
