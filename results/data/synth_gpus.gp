set terminal svg size 960,600 dynamic
set output 'synth_gpus.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd 'results/data'
set title 'FAST synthesis time vs GPUs (Zipf 0.8, 8 GPUs per server)'
set key inside left top
set xlabel 'GPUs'
set ylabel 'synthesis time (us)'
set logscale xy
plot 'synth_gpus.dat' using 1:2:3:4 with yerrorlines lw 2 title 'this implementation (mean, min..max)', 'synth_paper.dat' using 1:2 with points pt 7 ps 1.6 title 'FAST paper (25 us at 32 .. 77 ms at 320 GPUs)'
